// Grows a call tree by merging children with the same frame, then lays it out in pre-order
// with children sorted by weight (heaviest first), the form the renderer draws from.

export interface ViewTree {
  n: number;
  /** Frame index per node; -1 for a synthetic root ("all"). */
  frame: Int32Array;
  parent: Int32Array;
  depth: Int32Array;
  self: Float64Array;
  total: Float64Array;
  /** Start offset of each node, in weight units from the root's start. */
  x: Float64Array;
  /** Subtree size: node i's subtree is [i, i + size[i]). */
  size: Int32Array;
  maxDepth: number;
}

export class TreeBuilder {
  private parent: Int32Array;
  private frame: Int32Array;
  private self: Float64Array;
  private count = 1;
  // Open-addressing hash of (parent, frame) -> node + 1: a Map keyed on large numbers is an
  // order of magnitude slower, and inverted views of big profiles do millions of lookups.
  private table = new Int32Array(2048);

  constructor(rootFrame: number, _frameCount: number, capacity = 1024) {
    this.parent = new Int32Array(capacity);
    this.frame = new Int32Array(capacity);
    this.self = new Float64Array(capacity);
    this.parent[0] = -1;
    this.frame[0] = rootFrame;
  }

  /** The child of `parent` with `frame`, created when missing. */
  child(parent: number, frame: number): number {
    const mask = this.table.length - 1;
    let slot = hash(parent, frame) & mask;
    for (let e = this.table[slot]; e !== 0; e = this.table[slot]) {
      if (this.parent[e - 1] === parent && this.frame[e - 1] === frame) return e - 1;
      slot = (slot + 1) & mask;
    }
    const id = this.append(parent, frame);
    this.table[slot] = id + 1;
    if (this.count * 2 > this.table.length) this.rehash();
    return id;
  }

  private rehash(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let id = 1; id < this.count; id++) {
      let slot = hash(this.parent[id], this.frame[id]) & mask;
      while (table[slot] !== 0) slot = (slot + 1) & mask;
      table[slot] = id + 1;
    }
    this.table = table;
  }

  /** A new child of `parent`, when the caller knows no sibling has the same frame (no lookup). */
  append(parent: number, frame: number): number {
    if (this.count === this.parent.length) this.grow();
    const id = this.count++;
    this.parent[id] = parent;
    this.frame[id] = frame;
    return id;
  }

  /** Nodes so far (ids are 0 .. size - 1). */
  get size(): number {
    return this.count;
  }

  addSelf(node: number, w: number): void {
    this.self[node] += w;
  }

  private grow(): void {
    const cap = this.parent.length * 2;
    const p = new Int32Array(cap);
    p.set(this.parent);
    this.parent = p;
    const f = new Int32Array(cap);
    f.set(this.frame);
    this.frame = f;
    const s = new Float64Array(cap);
    s.set(this.self);
    this.self = s;
  }

  /** Lays the tree out; nodes with no weight are dropped. */
  finish(): ViewTree {
    const n = this.count;
    const total = this.self.slice(0, n);
    for (let i = n - 1; i > 0; i--) total[this.parent[i]] += total[i];
    const kids = childLists(this.parent, total, n);
    return layout(kids, this.frame, this.self, total);
  }
}

function hash(parent: number, frame: number): number {
  return (Math.imul(parent, 0x9e3779b1) ^ Math.imul(frame + 1, 0x85ebca6b)) >>> 0;
}

interface ChildLists {
  start: Int32Array;
  list: Int32Array;
}

/** Children of each node (CSR form), heaviest first, zero-weight children left out. */
function childLists(parent: Int32Array, total: Float64Array, n: number): ChildLists {
  const start = new Int32Array(n + 1);
  for (let i = 1; i < n; i++) if (total[i] > 0) start[parent[i] + 1]++;
  for (let i = 0; i < n; i++) start[i + 1] += start[i];
  const fill = start.slice(0, n);
  const list = new Int32Array(start[n]);
  for (let i = 1; i < n; i++) if (total[i] > 0) list[fill[parent[i]]++] = i;
  for (let i = 0; i < n; i++) {
    if (start[i + 1] - start[i] > 1) list.subarray(start[i], start[i + 1]).sort((a, b) => total[b] - total[a]);
  }
  return { start, list };
}

function layout(kids: ChildLists, frameOld: Int32Array, selfOld: Float64Array, totalOld: Float64Array): ViewTree {
  const m = kids.list.length + 1;
  const out: ViewTree = {
    n: m,
    frame: new Int32Array(m),
    parent: new Int32Array(m),
    depth: new Int32Array(m),
    self: new Float64Array(m),
    total: new Float64Array(m),
    x: new Float64Array(m),
    size: new Int32Array(m),
    maxDepth: 0,
  };
  const stackNode = new Int32Array(m);
  const stackParentPos = new Int32Array(m);
  const stackX = new Float64Array(m);
  let sp = 0;
  stackNode[sp] = 0;
  stackParentPos[sp] = -1;
  stackX[sp] = 0;
  sp++;
  let pos = 0;
  while (sp > 0) {
    sp--;
    const old = stackNode[sp];
    const pp = stackParentPos[sp];
    const p = pos++;
    out.frame[p] = frameOld[old];
    out.parent[p] = pp;
    out.depth[p] = pp < 0 ? 0 : out.depth[pp] + 1;
    if (out.depth[p] > out.maxDepth) out.maxDepth = out.depth[p];
    out.self[p] = selfOld[old];
    out.total[p] = totalOld[old];
    out.x[p] = stackX[sp];
    // Push children in reverse so the heaviest is laid out (and drawn) first, leftmost.
    let cx = stackX[sp];
    const a = kids.start[old];
    const b = kids.start[old + 1];
    for (let k = a; k < b; k++) cx += totalOld[kids.list[k]];
    for (let k = b - 1; k >= a; k--) {
      const c = kids.list[k];
      cx -= totalOld[c];
      stackNode[sp] = c;
      stackParentPos[sp] = p;
      stackX[sp] = cx;
      sp++;
    }
  }
  for (let i = 0; i < m; i++) out.size[i] = 1;
  for (let i = m - 1; i > 0; i--) out.size[out.parent[i]] += out.size[i];
  return out;
}
