// Indexes a .cpuprofile's flat node list: id → index, parent and children by index. The
// root is nodes[0] (V8 writes it first); cycles and dangling ids are cut, never followed.

import type { CpuProfile } from './cpu-profile.js';

export interface RawIndex {
  count: number;
  parent: Int32Array;
  children: number[][];
  root: number;
  byId: Map<number, number>;
  /** id → index as an array when ids are small integers (V8 numbers them 1..n): no Map lookup per sample. */
  dense: Int32Array | null;
  /** 1 for nodes reachable from the root; samples of other nodes are dropped. */
  reachable: Uint8Array;
}

export function indexNodes(profile: CpuProfile): RawIndex {
  const count = profile.nodes.length;
  const byId = new Map<number, number>();
  for (let i = 0; i < count; i++) byId.set(profile.nodes[i].id, i);
  const parent = new Int32Array(count).fill(-1);
  const children: number[][] = new Array(count);
  // V8 writes the root first. Nodes unreachable from it (a cycle, a dangling id) are never
  // visited by the pre-order walk, so they carry no weight.
  const root = 0;
  for (let i = 0; i < count; i++) {
    const ids = profile.nodes[i].children ?? [];
    const kids: number[] = [];
    for (const id of ids) {
      const c = byId.get(id);
      // Guard against cycles and nodes listed twice: a node keeps its first parent.
      if (c !== undefined && c !== root && c !== i && parent[c] === -1) {
        parent[c] = i;
        kids.push(c);
      }
    }
    children[i] = kids;
  }
  const reachable = new Uint8Array(count);
  const stack = [root];
  while (stack.length > 0) {
    const i = stack.pop()!;
    reachable[i] = 1;
    for (const c of children[i]) stack.push(c);
  }
  return { count, parent, children, root, byId, reachable, dense: denseIds(profile) };
}

function denseIds(profile: CpuProfile): Int32Array | null {
  let max = 0;
  for (const n of profile.nodes) {
    if (!Number.isInteger(n.id) || n.id < 0) return null;
    if (n.id > max) max = n.id;
  }
  if (max > 4 * profile.nodes.length + 1024) return null;
  const dense = new Int32Array(max + 1).fill(-1);
  profile.nodes.forEach((n, i) => {
    if (dense[n.id] === -1) dense[n.id] = i;
  });
  return dense;
}

/** The index of node `id`, or undefined. */
export function nodeIndex(raw: RawIndex, id: number): number | undefined {
  if (raw.dense) {
    const i = id >= 0 && id < raw.dense.length ? raw.dense[id] : -1;
    return i >= 0 ? i : undefined;
  }
  return raw.byId.get(id);
}
