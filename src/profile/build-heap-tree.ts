// Builds a CallTree from a sampling heap profile: the same shape as a CPU tree, with bytes
// as the weight (unit 'bytes'), frames classified and source-mapped the same way. With the
// agent's settings the profile includes objects already collected, so it shows allocation
// pressure (who allocates), not retention.

import type { CallTree } from './call-tree.js';
import type { HeapProfile, HeapProfileNode } from './heap-profile.js';
import { FrameTable } from './frame-table.js';
import { layoutTree } from './layout-tree.js';
import { SourceMapResolver } from './source-maps.js';
import type { BuildCallTreeOptions } from './build-call-tree.js';
import { attributedSelf } from './attribution.js';
import { frameTotals } from './frame-totals.js';

export type BuildHeapTreeOptions = Omit<BuildCallTreeOptions, 'window'>;

/** Flattens the nested tree (iteratively) into parent/children arrays. */
function flatten(head: HeapProfileNode) {
  const nodes: HeapProfileNode[] = [];
  const parent: number[] = [];
  const stack: [HeapProfileNode, number][] = [[head, -1]];
  while (stack.length > 0) {
    const [n, p] = stack.pop()!;
    const i = nodes.length;
    nodes.push(n);
    parent.push(p);
    for (let k = n.children.length - 1; k >= 0; k--) stack.push([n.children[k], i]);
  }
  const kids: number[][] = nodes.map(() => []);
  for (let i = 1; i < nodes.length; i++) kids[parent[i]].push(i);
  return { nodes, raw: { count: nodes.length, parent: Int32Array.from(parent), children: kids, root: 0 } };
}

export function buildHeapTree(profile: HeapProfile, options: BuildHeapTreeOptions): CallTree {
  const resolver = options.sourceMaps === false ? undefined : (options.resolver ?? new SourceMapResolver());
  const frames = new FrameTable({ cwd: options.cwd, appRoots: options.appRoots, resolver });
  const { nodes, raw } = flatten(profile.head);
  const rawFrame = new Int32Array(raw.count);
  const rawSelf = new Float64Array(raw.count);
  for (let i = 0; i < raw.count; i++) {
    rawFrame[i] = i === 0 ? 0 : frames.intern(nodes[i].callFrame);
    rawSelf[i] = Math.max(0, nodes[i].selfSize || 0);
  }
  const { arrays } = layoutTree(raw, rawFrame, rawSelf, frames.frames);
  return { ...arrays, frames: frames.frames, startUs: 0, endUs: 0, unit: 'bytes', sampleCount: profile.samples?.length ?? 0 };
}

export interface Allocator {
  frame: number;
  function: string;
  file: string;
  line: number;
  kind: string;
  /** Sampled bytes allocated by the function (attributed: core/deps/native allocations it asked for included). */
  bytes: number;
  /** Share of all sampled bytes, 0..1. */
  share: number;
  /** Bytes allocated in its whole subtree. */
  totalBytes: number;
}

/** The functions that allocate the most (attributed), app code only by default. */
export function topAllocators(tree: CallTree, options: { limit?: number; appOnly?: boolean } = {}): Allocator[] {
  const { limit = 10, appOnly = true } = options;
  const totals = frameTotals(tree, attributedSelf(tree));
  const all = tree.totalUs > 0 ? tree.totalUs : 1;
  const out: Allocator[] = [];
  for (let f = 1; f < tree.frames.length; f++) {
    const fr = tree.frames[f];
    if ((appOnly && fr.kind !== 'app') || totals.self[f] <= 0) continue;
    out.push({
      frame: f,
      function: fr.name,
      file: fr.file,
      line: fr.line,
      kind: fr.kind,
      bytes: totals.self[f],
      share: totals.self[f] / all,
      totalBytes: totals.total[f],
    });
  }
  return out.sort((a, b) => b.bytes - a.bytes).slice(0, limit);
}
