// Who keeps a leak the framework allocated: objects made with no app frame on their stacks (the
// request and its headers by node's HTTP parser, a context or reply object by the framework, the
// closures it creates) and stored by a few lines of app code in a callback the framework calls (a
// middleware, a hook) that allocates nothing of its own worth a sample. The heap profile then
// names no app function, or the one that allocated what hangs off those objects (a route
// handler's response fields, retained through the request that references the response). The
// code says more: of the app functions that ran during the load (the CPU profile's app frames
// and the functions the call-count window saw called), the only one whose source stores into a
// collection that outlives the call (leak-holder.ts: a module-level or a closure's Map, Set or
// array) is most likely the keeper. Several such functions: none is named.

import type { RunData } from '../../run-dir/run-data.js';
import type { Culprit } from '../finding.js';
import { cpuViewOf } from './cpu-view.js';
import { frameCulprit, relativeFile } from './culprit.js';
import { leakHolder, type LeakHolder } from './leak-holder.js';
import { classifyPath, urlToPath } from '../../profile/classify-frame.js';

export interface LeakKeeper {
  culprit: Culprit;
  holder: LeakHolder;
  /** How many app functions that ran were read for a store. */
  candidates: number;
}

/** Scripts whose call counts are read by line: plain JavaScript (a compiled file's lines are not its source's). */
const PLAIN_JS = /\.(c|m)?js$/;

/** The app functions that ran during the load: CPU profile frames and counted calls. */
function appFunctionsRun(run: RunData): Culprit[] {
  const out = new Map<string, Culprit>();
  const add = (c: Culprit): void => {
    if (c.line > 0) out.set(`${c.file}:${c.line}`, c);
  };
  const view = cpuViewOf(run);
  if (view) for (const f of view.tree.frames) if (f.kind === 'app') add(frameCulprit(f, run.cwd));
  for (const counts of run.callCounts ?? []) {
    for (const [url, rows] of Object.entries(counts.scripts)) {
      const path = urlToPath(url);
      if (path === undefined || !PLAIN_JS.test(path) || classifyPath(path, { cwd: run.cwd }) !== 'app') continue;
      for (const r of rows)
        if (r[5] > 0) add({ function: r[0] || '(anonymous)', file: relativeFile(path, run.cwd), line: r[1] + 1, column: r[2] + 1 });
    }
  }
  return [...out.values()];
}

/** The only app function that ran and stores into a module-level or closure collection, if exactly one does. */
export function soleKeeper(run: RunData): LeakKeeper | undefined {
  const candidates = appFunctionsRun(run);
  const keepers: { culprit: Culprit; holder: LeakHolder }[] = [];
  for (const c of candidates) {
    const holder = leakHolder(run.cwd, c);
    if (holder && holder.scope !== 'property') keepers.push({ culprit: c, holder });
  }
  return keepers.length === 1 ? { ...keepers[0], candidates: candidates.length } : undefined;
}
