// Stacks of a function: the distinct root-to-frame paths by time, and how deep and how
// recursive its stacks get ("very deep, recursive route.handle / next stacks", STORIES.md 3).

import type { CallTree } from './call-tree.js';

/** Frame indexes from the root's child down to the node. */
export function stackOf(tree: CallTree, node: number): number[] {
  const out: number[] = [];
  for (let i = node; i > 0; i = tree.parent[i]) out.push(tree.frame[i]);
  return out.reverse();
}

export interface StackPath {
  /** Frame indexes, outermost first, ending at the function. */
  frames: number[];
  /** Total time through this path (tree unit). */
  us: number;
}

/** The heaviest distinct paths that reach a function (outermost occurrence only). */
export function stackPaths(tree: CallTree, frameIndex: number, limit = 5): StackPath[] {
  const paths: StackPath[] = [];
  for (let i = 1; i < tree.frame.length; i++) {
    if (tree.frame[i] !== frameIndex) continue;
    paths.push({ frames: stackOf(tree, i), us: tree.total[i] });
    i += tree.subtreeSize[i] - 1;
  }
  return paths.sort((a, b) => b.us - a.us).slice(0, limit);
}

export interface Recursion {
  /** Most times the function is on one stack. */
  maxOccurrences: number;
  /** Time-weighted mean occurrences over the samples where it is on the stack. */
  meanOccurrences: number;
  /** Deepest stack (frames) that contains it. */
  maxStackDepth: number;
  /** Time-weighted mean stack depth of those samples. */
  meanStackDepth: number;
}

/** How recursive and deep the stacks through a function are, from the samples' leaves. */
export function recursionOf(tree: CallTree, frameIndex: number): Recursion {
  const n = tree.frame.length;
  const count = new Int32Array(n); // occurrences of the frame on the path root..i
  let maxOcc = 0, maxDepth = 0, weight = 0, occSum = 0, depthSum = 0;
  for (let i = 1; i < n; i++) {
    count[i] = count[tree.parent[i]] + (tree.frame[i] === frameIndex ? 1 : 0);
    if (count[i] === 0) continue;
    maxOcc = Math.max(maxOcc, count[i]);
    maxDepth = Math.max(maxDepth, tree.depth[i]);
    const w = tree.self[i];
    weight += w;
    occSum += w * count[i];
    depthSum += w * tree.depth[i];
  }
  return {
    maxOccurrences: maxOcc,
    meanOccurrences: weight > 0 ? occSum / weight : 0,
    maxStackDepth: maxDepth,
    meanStackDepth: weight > 0 ? depthSum / weight : 0,
  };
}

/** The time-weighted mean and the maximum stack depth over the whole profile (non-idle). */
export function stackDepthStats(tree: CallTree): { mean: number; max: number } {
  let w = 0, sum = 0, max = 0;
  for (let i = 1; i < tree.frame.length; i++) {
    if (tree.self[i] <= 0 || tree.frames[tree.frame[i]].kind === 'idle') continue;
    w += tree.self[i];
    sum += tree.self[i] * tree.depth[i];
    max = Math.max(max, tree.depth[i]);
  }
  return { mean: w > 0 ? sum / w : 0, max };
}
