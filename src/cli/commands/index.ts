// The list of hotpath's commands. Each lives in its own file next to this one.

import type { Command } from '../command.js';
import { runCommand } from './run.js';
import { reportCommand } from './report.js';
import { loadCommand } from './load.js';
import { demoCommand } from './demo.js';
import { exportCommand } from './export.js';
import { profCommand } from './prof.js';
import { importCommand } from './import.js';

import { compareCommand } from './compare.js';

export const commands: readonly Command[] = [
  runCommand,
  reportCommand,
  loadCommand,
  demoCommand,
  exportCommand,
  profCommand,
  importCommand,

  compareCommand,
];
