// Validates and completes the options of one run (from the CLI or the programmatic API)
// before anything is spawned: declared flags through their OptionSpec list, then what
// specs cannot say (a command or --url, not both), and every check the load makes (headers,
// method, body file, scenario, --hdr-log...), so that bad input never starts the target.

import { resolve } from 'node:path';
import { resolveOptions, type ResolvedOptionValues } from '../options/option-spec.js';
import { hotpathError } from '../errors.js';
import { checkHdrLogPath } from '../load/hdr-log.js';
import { pickLoadFlags } from '../load/load-options.js';
import { planLoad } from '../load/load-plan.js';
import { readScenario } from '../load/scenario.js';
import type { ScenarioRequest } from '../load/request-template.js';
import { runOptionSpecs, type RunOptions } from './run-options.js';
import { DEFAULT_DURATION_S } from '../load/load-options.js';
import { defaultCpuIntervalUs } from './cpu-interval.js';

/** A run's options once checked: every declared flag typed, defaults filled in, files resolved from cwd. */
export type ResolvedRunOptions = ResolvedOptionValues<typeof runOptionSpecs> & {
  command: string[];
  cwd: string;
  /** Declared without a default: the run's default depends on the load (cpu-interval.ts). */
  cpuInterval: number;
  /** The --setup file, read and validated. */
  setupRequests?: ScenarioRequest[];
};

/** The load flags of a run, checked as `hotpath load` would check them, with a stand-in URL until the target listens. */
function checkLoad(o: Omit<ResolvedRunOptions, 'command' | 'cwd'>): void {
  const url = o.url ?? `http://127.0.0.1/${o.path.replace(/^\//, '')}`;
  planLoad({ flags: pickLoadFlags(o), url, setup: o.setupRequests }, false);
  if (o.hdrLog !== undefined) checkHdrLogPath(o.hdrLog);
}

export function resolveRunOptions(input: RunOptions, cwd: string): ResolvedRunOptions {
  const { command = [], ...flags } = input;
  const values = resolveOptions(runOptionSpecs, flags);
  if (command.length === 0 && values.url === undefined) {
    throw hotpathError(
      'HOTPATH_ERR_MISSING_ARGUMENT',
      'hotpath run needs the command that starts your server after `--`, e.g. `hotpath run -- node server.js` (or --url to drive a running server)',
      { showUsage: true },
    );
  }
  if (command.length > 0 && values.url !== undefined) {
    throw hotpathError(
      'HOTPATH_ERR_INVALID_OPTION',
      '--url drives a server that is already running: give either --url or a command after `--`, not both',
      { showUsage: true, details: { option: 'url' } },
    );
  }
  const setupRequests = values.setup === undefined ? undefined : readScenario(resolve(cwd, values.setup));
  const abs = (f: string | undefined) => (f === undefined ? undefined : resolve(cwd, f));
  const resolved = {
    ...values,
    out: resolve(cwd, values.out),
    setupRequests,
    cpuInterval:
      (values.cpuInterval as number | undefined) ??
      defaultCpuIntervalUs(values.amount !== undefined ? undefined : (values.duration ?? DEFAULT_DURATION_S), values.amount !== undefined),
    bodyFile: abs(values.bodyFile),
    scenario: abs(values.scenario),
    hdrLog: abs(values.hdrLog),
  };
  // Everything the load will check, checked now: bad input never starts the target (docs/run.md).
  checkLoad(resolved);
  return { ...resolved, command: [...command], cwd };
}
