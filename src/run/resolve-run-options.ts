// Validates and completes the options of one run (from the CLI or the programmatic API)
// before anything is spawned: declared flags through their OptionSpec list, then what
// specs cannot say (a command or --url, not both; files that must be readable).

import { accessSync, constants } from 'node:fs';
import { resolve } from 'node:path';
import { resolveOptions } from '../cli/option-spec.js';
import { hotpathError } from '../errors.js';
import { readScenario } from '../load/scenario.js';
import type { ScenarioRequest } from '../load/request-template.js';
import { runOptionSpecs, type RunOptions } from './run-options.js';

export interface ResolvedRunOptions extends RunOptions {
  command: string[];
  cwd: string;
  path: string;
  out: string;
  readyTimeout: number;
  interval: number;
  cpuInterval: number;
  profile: boolean;
  heap: boolean;
  hooks: boolean;
  grace: number;
  connections: number;
  duration?: number;
  json: boolean;
  /** The --setup file, read and validated. */
  setupRequests?: ScenarioRequest[];
}

function checkReadable(file: string | undefined, cwd: string, code: 'HOTPATH_ERR_BODY_FILE' | 'HOTPATH_ERR_SCENARIO', flag: string): void {
  if (file === undefined) return;
  try {
    accessSync(resolve(cwd, file), constants.R_OK);
  } catch (err) {
    throw hotpathError(code, `${flag} ${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      { cause: err, details: { file } });
  }
}

export function resolveRunOptions(input: RunOptions, cwd: string): ResolvedRunOptions {
  const { command = [], ...flags } = input;
  const values = resolveOptions(runOptionSpecs, flags as Record<string, unknown>) as Omit<ResolvedRunOptions, 'command' | 'cwd'>;
  if (command.length === 0 && values.url === undefined) {
    throw hotpathError('HOTPATH_ERR_MISSING_ARGUMENT',
      'hotpath run needs the command that starts your server after `--`, e.g. `hotpath run -- node server.js` (or --url to drive a running server)',
      { showUsage: true });
  }
  if (command.length > 0 && values.url !== undefined) {
    throw hotpathError('HOTPATH_ERR_INVALID_OPTION', '--url drives a server that is already running: give either --url or a command after `--`, not both',
      { showUsage: true, details: { option: 'url' } });
  }
  checkReadable(values.bodyFile, cwd, 'HOTPATH_ERR_BODY_FILE', '--body-file');
  checkReadable(values.scenario, cwd, 'HOTPATH_ERR_SCENARIO', '--scenario');
  const setupRequests = values.setup === undefined ? undefined : readScenario(resolve(cwd, values.setup));
  const abs = (f: string | undefined) => (f === undefined ? undefined : resolve(cwd, f));
  return {
    ...values, command: [...command], cwd, out: resolve(cwd, values.out), setupRequests,
    bodyFile: abs(values.bodyFile), scenario: abs(values.scenario), hdrLog: abs(values.hdrLog),
  };
}
