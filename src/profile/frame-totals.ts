// Per-function (per frame) self and total time. Total counts each sample once even when
// the function is on the stack several times (recursion: route.handle → next → route.handle).

import type { CallTree } from './call-tree.js';

export interface FrameTotals {
  /** Self time per frame index (plain or attributed, as asked). */
  self: Float64Array;
  /** Total time per frame index, counted once per sample under recursion. */
  total: Float64Array;
}

/** Sums per-node self values (tree.self, or attributedSelf) and totals per frame. */
export function frameTotals(tree: CallTree, nodeSelf: Float64Array = tree.self): FrameTotals {
  const nf = tree.frames.length;
  const self = new Float64Array(nf);
  const total = new Float64Array(nf);
  const onStack = new Int32Array(nf);
  const stack: number[] = [];
  const n = tree.frame.length;
  for (let i = 0; i < n; i++) {
    // Leave the subtrees that ended before node i.
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (i < top + tree.subtreeSize[top]) break;
      onStack[tree.frame[top]]--;
      stack.pop();
    }
    const f = tree.frame[i];
    self[f] += nodeSelf[i];
    if (onStack[f] === 0) total[f] += tree.total[i];
    onStack[f]++;
    stack.push(i);
  }
  return { self, total };
}
