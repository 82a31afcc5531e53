// Aggregates a raw profile tree (V8's nodes, one per call site and code version) into the
// CallTree's flat pre-order arrays: children with the same frame under the same parent are
// merged, and subtrees that carry no weight are left out.

import type { CallTree, Frame } from './call-tree.js';

export interface RawTree {
  count: number;
  parent: Int32Array;
  /** Children by index (plain arrays or Int32Arrays: both are accepted). */
  children: ArrayLike<number>[];
  root: number;
}

type TreeArrays = Pick<CallTree, 'frame' | 'parent' | 'depth' | 'subtreeSize' | 'self' | 'total' | 'totalUs' | 'activeUs'>;

export interface Layout {
  arrays: TreeArrays;
  /** Final node index of each raw node (-1 when it carried no weight). */
  aggOf: Int32Array;
}

function preOrder(root: number, children: ArrayLike<number>[], count: number): Int32Array {
  const order = new Int32Array(count);
  const stack = [root];
  let n = 0;
  while (stack.length > 0) {
    const i = stack.pop()!;
    order[n++] = i;
    const kids = children[i];
    for (let k = kids.length - 1; k >= 0; k--) stack.push(kids[k]);
  }
  return order.subarray(0, n);
}

/** Merges raw nodes by (parent, frame) into temporary nodes; returns their parent, frame and self. */
function merge(raw: RawTree, rawFrame: Int32Array, rawSelf: Float64Array, nFrames: number) {
  const order = preOrder(raw.root, raw.children, raw.count);
  const rawTotal = Float64Array.from(rawSelf);
  for (let k = order.length - 1; k > 0; k--) rawTotal[raw.parent[order[k]]] += rawTotal[order[k]];
  const aggOf = new Int32Array(raw.count).fill(-1);
  const parent: number[] = [-1];
  const frame: number[] = [0];
  const self: number[] = [rawSelf[raw.root]];
  const kids: number[][] = [[]];
  const byKey = new Map<number, number>();
  aggOf[raw.root] = 0;
  for (let k = 1; k < order.length; k++) {
    const r = order[k];
    const p = aggOf[raw.parent[r]];
    if (p < 0 || rawTotal[r] <= 0) continue;
    const key = p * nFrames + rawFrame[r];
    let a = byKey.get(key);
    if (a === undefined) {
      a = parent.length;
      byKey.set(key, a);
      parent.push(p);
      frame.push(rawFrame[r]);
      self.push(0);
      kids.push([]);
      kids[p].push(a);
    }
    self[a] += rawSelf[r];
    aggOf[r] = a;
  }
  return { parent, frame, self, kids, aggOf };
}

export function layoutTree(raw: RawTree, rawFrame: Int32Array, rawSelf: Float64Array, frames: Frame[]): Layout {
  const m = merge(raw, rawFrame, rawSelf, Math.max(1, frames.length));
  const n = m.parent.length;
  const order = preOrder(0, m.kids, n);
  const finalOf = new Int32Array(n);
  for (let k = 0; k < n; k++) finalOf[order[k]] = k;
  const a: TreeArrays = {
    frame: new Int32Array(n),
    parent: new Int32Array(n),
    depth: new Int32Array(n),
    subtreeSize: new Int32Array(n).fill(1),
    self: new Float64Array(n),
    total: new Float64Array(n),
    totalUs: 0,
    activeUs: 0,
  };
  let idle = 0;
  for (let k = 0; k < n; k++) {
    const t = order[k];
    const p = m.parent[t] < 0 ? -1 : finalOf[m.parent[t]];
    a.frame[k] = m.frame[t];
    a.parent[k] = p;
    a.depth[k] = p < 0 ? 0 : a.depth[p] + 1;
    a.self[k] = m.self[t];
    a.total[k] = m.self[t];
    if (frames[m.frame[t]].kind === 'idle') idle += m.self[t];
  }
  for (let k = n - 1; k > 0; k--) {
    a.total[a.parent[k]] += a.total[k];
    a.subtreeSize[a.parent[k]] += a.subtreeSize[k];
  }
  a.totalUs = a.total[0];
  a.activeUs = a.totalUs - idle;
  const aggOf = m.aggOf.map((x) => (x < 0 ? -1 : finalOf[x]));
  return { arrays: a, aggOf };
}
