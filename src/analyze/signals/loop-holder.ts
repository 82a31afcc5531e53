// The loop's long holder: when requests are cheap and the loop is still delayed, the function
// that held it for long stretches without a break (a timer job, a periodic flush), and the app
// function under it doing most of that work.

import type { RunData } from '../../run-dir/run-data.js';
import type { LoopStats } from './loop-stats.js';
import { samplesOf, type CpuView, type FunctionCost } from './cpu-view.js';
import { longestHolder, longStretches, type LongStretches } from '../../profile/long-stretches.js';
import { attributedSelf } from '../../profile/attribution.js';
import { functionKey } from '../../profile/anonymous-names.js';
import { describeCulprit, frameCulprit } from './culprit.js';
import { round } from './stats.js';

/**
 * Stretches of time a function held the loop without a break count from this long (ms), and
 * from half the loop's delay p99 when that is longer: the blocks that make the delay.
 */
export const BLOCKING_STRETCH_MIN_MS = 20;

export interface Holder {
  stretches: LongStretches;
  cost?: FunctionCost;
}

/**
 * When the requests are cheap and the loop is still delayed, the function that held it for long
 * stretches (a timer job, a periodic flush), not the one with the most CPU (the cheap handler
 * run 40,000 times a second).
 */
export function longHolder(run: RunData, s: LoopStats, view: CpuView | undefined): Holder | undefined {
  if (!view) return undefined;
  const minUs = Math.max(BLOCKING_STRETCH_MIN_MS, s.eldP99Ms / 2) * 1000;
  const holder = longestHolder(longStretches(samplesOf(run, view), minUs));
  if (!holder) return undefined;
  const f = holder.frame;
  const at = view.functions.find((c) => c.frame.name === f.name && c.frame.file === f.file && c.frame.line === f.line);
  const cost = at ? mainWorkUnder(view, at) : undefined;
  return { stretches: holder, ...(cost ? { cost } : {}) };
}

/**
 * The app function doing most of the work under `fn` (itself included), when one does at least
 * half of it: a sampled stack may lose the callee V8 inlined into the job's callback, but the
 * tree, with inlined frames restored, still has it.
 */
function mainWorkUnder(view: CpuView, fn: FunctionCost): FunctionCost {
  const tree = view.tree;
  // fn is an app frame: what its subtree's nodes are charged to stays inside the subtree.
  const attributed = attributedSelf(tree);
  const self = new Map<number, number>();
  let total = 0;
  for (let i = 1; i < tree.frame.length; i++) {
    if (tree.frame[i] !== fn.frameIndex) continue;
    const end = i + tree.subtreeSize[i];
    for (let j = i; j < end; j++) {
      const frame = tree.frame[j];
      if (attributed[j] <= 0 || tree.frames[frame].kind !== 'app') continue;
      self.set(frame, (self.get(frame) ?? 0) + attributed[j]);
      total += attributed[j];
    }
    i = end - 1;
  }
  const [frame, us] = [...self].sort((a, b) => b[1] - a[1])[0] ?? [fn.frameIndex, 0];
  if (frame === fn.frameIndex || us < total / 2) return fn;
  return view.functions.find((c) => c.frameIndex === frame) ?? fn;
}

export function describeHolder(held: Holder, cwd: string, totalUs: number, activeUs: number): string {
  const h = held.stretches;
  const inAll = totalUs > 0 ? `, ${round((h.totalUs / totalUs) * 100, 0)} % of the time` : '';
  const holder = frameCulprit(h.frame, cwd);
  const work =
    held.cost && functionKey(held.cost.frame) !== functionKey(h.frame) && activeUs > 0
      ? ` Most of that work is in ${describeCulprit(frameCulprit(held.cost.frame, cwd))}, ${round((held.cost.selfUs / activeUs) * 100, 0)} % of the CPU time.`
      : '';
  return (
    ` ${describeCulprit(holder)} held the loop for up to ${round(h.maxUs / 1000, 0)} ms at a time ` +
    `(${h.count} stretch${h.count === 1 ? '' : 'es'} without a break, ${round(h.totalUs / 1000, 0)} ms in all${inAll}).${work}`
  );
}
