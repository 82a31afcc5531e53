// The attribution rule: the time of a sample whose leaf is a native, V8 builtin, Node core
// or dependency frame is charged to the nearest app frame above it (the user's code that
// asked for the work: JSON.stringify, hashing, regex, zlib, a router's loop). With no app
// frame on the stack the time stays where it is. GC, idle and (program) never move.

import type { CallTree, FrameKind } from './call-tree.js';

const movable: ReadonlySet<FrameKind> = new Set(['native', 'kernel', 'v8-builtin', 'node-core', 'deps']);

/** Per node, the nearest app node at or above it, or -1 when no app frame is on its stack. */
export function appOwners(tree: CallTree): Int32Array {
  const n = tree.frame.length;
  const owner = new Int32Array(n).fill(-1);
  for (let i = 1; i < n; i++) {
    owner[i] = tree.frames[tree.frame[i]].kind === 'app' ? i : owner[tree.parent[i]];
  }
  return owner;
}

/** Per node, the node its self time is charged to under the attribution rule. */
export function chargedTo(tree: CallTree, owner: Int32Array = appOwners(tree)): Int32Array {
  const n = tree.frame.length;
  const to = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    to[i] = movable.has(tree.frames[tree.frame[i]].kind) && owner[i] >= 0 ? owner[i] : i;
  }
  return to;
}

/** Self time per node after attribution (sums to the same total as tree.self). */
export function attributedSelf(tree: CallTree, to: Int32Array = chargedTo(tree)): Float64Array {
  const out = new Float64Array(tree.frame.length);
  for (let i = 0; i < tree.frame.length; i++) out[to[i]] += tree.self[i];
  return out;
}

/** The nearest app node above (or at) a node: "the user's code that asked for this", or -1. */
export function firstAppAncestor(tree: CallTree, node: number): number {
  for (let i = node; i > 0; i = tree.parent[i]) {
    if (tree.frames[tree.frame[i]].kind === 'app') return i;
  }
  return -1;
}

export interface AppCaller {
  /** Frame index of the app function. */
  frame: number;
  /** Time of the given frame's nodes (their total) reached from under this app frame, in the tree's unit. */
  us: number;
}

/**
 * For a hot frame (say JSON.stringify's caller in a dependency, or node:zlib's processChunkSync),
 * the app functions it was called from, by time: the first app frame above each of its nodes.
 * Nested occurrences are counted once.
 */
export function appCallersOf(tree: CallTree, frameIndex: number): AppCaller[] {
  const byFrame = new Map<number, number>();
  const n = tree.frame.length;
  for (let i = 1; i < n; i++) {
    if (tree.frame[i] !== frameIndex) continue;
    const app = firstAppAncestor(tree, tree.frames[frameIndex].kind === 'app' ? tree.parent[i] : i);
    const key = app < 0 ? -1 : tree.frame[app];
    byFrame.set(key, (byFrame.get(key) ?? 0) + tree.total[i]);
    i += tree.subtreeSize[i] - 1; // the subtree is already counted in this node's total
  }
  return [...byFrame].map(([frame, us]) => ({ frame, us })).sort((a, b) => b.us - a.us);
}
