// How a blocking function's work reached the loop, when that is part of the fix: a chain of
// process.nextTick callbacks (run before the loop returns to I/O) or a timer (a background job).

import type { CpuView, FunctionCost } from './cpu-view.js';
import type { Frame } from '../../profile/call-tree.js';
import { entryShares } from '../../profile/entry-points.js';
import { describeCulprit, frameCulprit } from './culprit.js';
import { ownGroup } from './focused-work.js';
import { round } from './stats.js';

/**
 * Share of the culprit's time that must run from one kind of queued callback (process.nextTick,
 * a timer) for the finding to say so: then how it is scheduled is part of the fix.
 */
export const BLOCKING_ENTRY_SHARE = 0.5;

export interface Scheduled {
  kind: 'nextTick' | 'timer';
  share: number;
  callback?: Frame;
}

/** How the culprit's work reached the loop, when that is a nextTick chain or a timer. */
export function scheduledBy(view: CpuView, top: FunctionCost): Scheduled | undefined {
  const group = new Set(ownGroup(view, top).map((f) => f.frameIndex));
  group.add(top.frameIndex);
  const first = entryShares(view.tree, (frame) => group.has(frame))[0];
  if (!first || first.share < BLOCKING_ENTRY_SHARE || (first.kind !== 'nextTick' && first.kind !== 'timer')) return undefined;
  // A framework that runs the app's middleware through process.nextTick (restify) is no chain
  // the app drains: only app code seen calling process.nextTick makes it the app's.
  if (first.kind === 'nextTick' && !appCallsNextTick(view.tree)) return undefined;
  const callback = first.callbacks[0];
  return { kind: first.kind, share: first.share, ...(callback ? { callback: view.tree.frames[callback.frame] } : {}) };
}

/** Whether app code (not a dependency) was sampled calling process.nextTick. */
function appCallsNextTick(tree: CpuView['tree']): boolean {
  for (let i = 1; i < tree.frame.length; i++) {
    const f = tree.frames[tree.frame[i]];
    if (f.name !== 'nextTick' || f.file !== 'node:internal/process/task_queues') continue;
    for (let p = tree.parent[i]; p > 0; p = tree.parent[p]) {
      const kind = tree.frames[tree.frame[p]].kind;
      if (kind === 'app') return true;
      if (kind === 'deps') break;
    }
  }
  return false;
}

export function describeScheduled(s: Scheduled, cwd: string): string {
  const pct = round(s.share * 100, 0);
  const where = s.callback ? `, most in ${describeCulprit(frameCulprit(s.callback, cwd))}` : '';
  return s.kind === 'nextTick'
    ? ` ${pct} % of it runs in process.nextTick callbacks${where}: Node runs all queued nextTick callbacks, and those they queue, before it returns to I/O.`
    : ` ${pct} % of it runs in timer callbacks${where}, not in request handlers: a background job holds the loop while requests wait.`;
}
