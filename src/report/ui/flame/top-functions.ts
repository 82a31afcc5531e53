// The functions with the most self time in the current flame view (its time window and
// shown layers), with their total time counted once per stack even when they recurse.

import type { ViewTree } from './tree-builder.js';

export interface TopFunction {
  frame: number;
  self: number;
  total: number;
}

export function topFunctions(tree: ViewTree, frameCount: number, limit: number): TopFunction[] {
  const self = new Float64Array(frameCount);
  for (let i = 1; i < tree.n; i++) if (tree.frame[i] >= 0) self[tree.frame[i]] += tree.self[i];
  const total = totalsOnce(tree, frameCount);
  const frames: number[] = [];
  for (let f = 0; f < frameCount; f++) if (self[f] > 0) frames.push(f);
  frames.sort((a, b) => self[b] - self[a]);
  return frames.slice(0, limit).map((f) => ({ frame: f, self: self[f], total: total[f] }));
}

/** Per frame, the total of its outermost occurrences (a pre-order walk with an on-stack count). */
function totalsOnce(tree: ViewTree, frameCount: number): Float64Array {
  const total = new Float64Array(frameCount);
  const onStack = new Int32Array(frameCount);
  const stackEnd: number[] = [];
  const stackFrame: number[] = [];
  for (let i = 0; i < tree.n; i++) {
    while (stackEnd.length > 0 && i >= stackEnd[stackEnd.length - 1]) {
      stackEnd.pop();
      const f = stackFrame.pop() ?? -1;
      if (f >= 0) onStack[f]--;
    }
    const f = tree.frame[i];
    if (f >= 0) {
      if (onStack[f] === 0) total[f] += tree.total[i];
      onStack[f]++;
    }
    stackEnd.push(i + tree.size[i]);
    stackFrame.push(f);
  }
  return total;
}
