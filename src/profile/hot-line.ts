// The hottest source line of a function: where in it its own samples fell (the profile's
// positionTicks, after source maps). A culprit's declaration line says which function to open;
// its hot line says where to look inside it ("renderPriceList, line 9: the toLocaleString call").

import type { CallTree } from './call-tree.js';

export interface HotLine {
  /** 1-based line in the function's (original) file. */
  line: number;
  /** Share of the function's line ticks on that line, 0..1. */
  share: number;
  ticks: number;
}

/** The line of `frameIndex` with the most ticks, or undefined when the profile has none for it. */
export function hotLine(tree: CallTree, frameIndex: number): HotLine | undefined {
  let total = 0;
  let best: { line: number; ticks: number } | undefined;
  for (const e of tree.lineTicks ?? []) {
    if (e.frame !== frameIndex) continue;
    total += e.ticks;
    if (best === undefined || e.ticks > best.ticks) best = e;
  }
  return best && total > 0 ? { line: best.line, share: best.ticks / total, ticks: best.ticks } : undefined;
}
