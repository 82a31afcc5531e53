// What the profile saw of a synchronous API's work under the app function that called it: the
// agent's hook times the binding call alone, while the code around it runs on the same loop turn
// for it (console.log to a synchronous stdout: the stream machinery of node:fs around each
// writeSync). A stdout logger's writes timed 6 % of the window (2.4 µs each) where the profile put
// 36 % of the CPU in node:fs code under the logging function.

import type { RunData } from '../../run-dir/run-data.js';
import type { Culprit } from '../finding.js';
import { cpuViewOf } from './cpu-view.js';
import { frameCulprit } from './culprit.js';

/** The profile's work kind of a sync API's module (`fs.writeSync` → fs). */
function workKindOf(api: string): string | undefined {
  const module = api.split('.')[0];
  if (module === 'fs' || module === 'crypto' || module === 'zlib') return module;
  if (module === 'child_process') return 'child-process';
  return undefined;
}

/**
 * The share of the active CPU the profile puts in `api`'s kind of work (its module's code and
 * natives) under `culprit`'s function; undefined without a profile or the function in it.
 */
export function syncCallCpuShare(run: RunData, api: string, culprit: Culprit): number | undefined {
  const kind = workKindOf(api);
  const view = cpuViewOf(run);
  if (!kind || !view || view.activeUs <= 0) return undefined;
  const fn = view.functions.find((f) => {
    if (f.frame.kind !== 'app' || f.frame.name !== culprit.function) return false;
    return frameCulprit(f.frame, run.cwd).file === culprit.file;
  });
  if (!fn) return undefined;
  let us = 0;
  for (const item of view.workOf(fn.frameIndex)) if (item.work === kind) us += item.us;
  return us / view.activeUs;
}
