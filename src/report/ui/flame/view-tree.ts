// Builds the tree a flame view shows from a profile, a time window's self weights and the
// view options: hidden layers, and the flame, inverted (who calls this, bottom-up), callers
// and callees views.
//
// Hiding a layer: gc, idle and program frames are pseudo-frames with no caller, so hiding
// them removes their time; hiding any other layer merges its frames into their nearest
// shown caller (their self time is charged to it and their callees move up to it).

import type { ProfileModel } from './profile-model.js';
import { TreeBuilder, type ViewTree } from './tree-builder.js';

export type ViewMode = 'flame' | 'inverted' | 'callers' | 'callees';

/** Kind codes (FRAME_KINDS order) whose time is removed, not merged, when hidden. */
export const REMOVED_WHEN_HIDDEN = new Set([5, 6, 7]);

export interface ViewOptions {
  mode: ViewMode;
  /** Kind codes that are hidden. */
  hidden: ReadonlySet<number>;
  /** Frame the callers and callees views are about. */
  focusFrame?: number;
}

interface Visible {
  /** Nearest shown ancestor-or-self of each base node (0, the root, at worst). */
  anc: Int32Array;
  /** Self weight after merging hidden frames into their shown callers. */
  self: Float64Array;
}

function visibility(m: ProfileModel, self: Float64Array, hidden: ReadonlySet<number>): Visible {
  const n = m.nodeCount;
  const anc = new Int32Array(n);
  const eff = new Float64Array(n);
  // One flag per kind code (a Uint8: any FRAME_KINDS index; agent, 8, and kernel, 9, too).
  const hide = new Uint8Array(256);
  for (const k of hidden) hide[k] = 1;
  for (let i = 1; i < n; i++) {
    const k = m.frameKind[m.nodeFrame[i]];
    anc[i] = hide[k] ? anc[m.nodeParent[i]] : i;
    if (self[i] === 0 || (hide[k] && REMOVED_WHEN_HIDDEN.has(k))) continue;
    eff[anc[i]] += self[i];
  }
  eff[0] += self[0];
  return { anc, self: eff };
}

export function buildViewTree(m: ProfileModel, self: Float64Array, opts: ViewOptions): ViewTree {
  const vis = visibility(m, self, opts.hidden);
  const focus = opts.focusFrame ?? -1;
  switch (opts.mode) {
    case 'flame':
      return flame(m, vis);
    case 'inverted':
      return inverted(m, vis);
    case 'callees':
      return callees(m, vis, focus);
    case 'callers':
      return callers(m, vis, focus);
  }
}

/** Nearest shown caller of base node i. */
function shownParent(m: ProfileModel, vis: Visible, i: number): number {
  return vis.anc[m.nodeParent[i]];
}

/**
 * The base tree is already merged by (parent, frame), so new merges only happen when a
 * hidden frame has callees that move up: without one, nodes are appended without lookups.
 */
function needsMerge(m: ProfileModel, vis: Visible): boolean {
  for (let i = 1; i < m.nodeCount; i++) {
    const p = m.nodeParent[i];
    if (p > 0 && vis.anc[p] !== p) return true;
  }
  return false;
}

function flame(m: ProfileModel, vis: Visible): ViewTree {
  const b = new TreeBuilder(-1, m.frameCount, Math.min(m.nodeCount + 1, 1 << 20));
  const disp = new Int32Array(m.nodeCount);
  const merge = needsMerge(m, vis);
  for (let i = 1; i < m.nodeCount; i++) {
    if (vis.anc[i] !== i) continue;
    const p = disp[shownParent(m, vis, i)];
    disp[i] = merge ? b.child(p, m.nodeFrame[i]) : b.append(p, m.nodeFrame[i]);
  }
  for (let i = 0; i < m.nodeCount; i++) if (vis.self[i] > 0) b.addSelf(disp[i], vis.self[i]);
  return b.finish();
}

/**
 * Callers are expanded level by level, and only below nodes heavy enough to be seen: an
 * inverted tree has one path per (leaf, caller chain) and would otherwise grow to millions of
 * nodes on large profiles. Lighter nodes keep their weight as self time, unexpanded.
 */
export const INVERTED_MIN_SHARE = 1 / 20_000;

/** Upward walks in progress: the view node reached, the next base node up, the weight carried. */
interface Walks {
  at: number[];
  next: number[];
  w: number[];
}

function expandCallers(m: ProfileModel, vis: Visible, b: TreeBuilder, walks: Walks, minWeight: number): void {
  let cur = walks;
  let weight: Float64Array = new Float64Array(1024);
  while (cur.at.length > 0) {
    weight = sumByNode(cur, weight, b.size);
    const next: Walks = { at: [], next: [], w: [] };
    for (let k = 0; k < cur.at.length; k++) {
      const j = cur.next[k];
      if (j === 0 || weight[cur.at[k]] < minWeight) {
        b.addSelf(cur.at[k], cur.w[k]);
        continue;
      }
      next.at.push(b.child(cur.at[k], m.nodeFrame[j]));
      next.next.push(shownParent(m, vis, j));
      next.w.push(cur.w[k]);
    }
    cur = next;
  }
}

/** The weight reaching each view node in this round of walks (fresh per round). */
function sumByNode(walks: Walks, weight: Float64Array, size: number): Float64Array {
  const out = weight.length >= size ? weight : new Float64Array(Math.max(size, weight.length * 2));
  for (const at of walks.at) out[at] = 0;
  for (let k = 0; k < walks.at.length; k++) out[walks.at[k]] += walks.w[k];
  return out;
}

function totalOf(vis: Visible): number {
  let t = 0;
  for (let i = 0; i < vis.self.length; i++) t += vis.self[i];
  return t;
}

/** Bottom-up: the functions where time was spent at the top, their callers below them. */
function inverted(m: ProfileModel, vis: Visible): ViewTree {
  const b = new TreeBuilder(-1, m.frameCount);
  b.addSelf(0, vis.self[0]);
  const walks: Walks = { at: [], next: [], w: [] };
  for (let i = 1; i < m.nodeCount; i++) {
    if (vis.self[i] === 0) continue;
    walks.at.push(b.child(0, m.nodeFrame[i]));
    walks.next.push(shownParent(m, vis, i));
    walks.w.push(vis.self[i]);
  }
  expandCallers(m, vis, b, walks, totalOf(vis) * INVERTED_MIN_SHARE);
  return b.finish();
}

/** Everything the focused function called, merged over all the places it ran. */
function callees(m: ProfileModel, vis: Visible, focus: number): ViewTree {
  const b = new TreeBuilder(focus, m.frameCount);
  const disp = new Int32Array(m.nodeCount).fill(-1);
  for (let i = 1; i < m.nodeCount; i++) {
    if (vis.anc[i] !== i) continue;
    const pd = disp[shownParent(m, vis, i)];
    if (pd >= 0) disp[i] = b.child(pd, m.nodeFrame[i]);
    else if (m.nodeFrame[i] === focus) disp[i] = 0;
  }
  for (let i = 0; i < m.nodeCount; i++) if (vis.self[i] > 0 && disp[i] >= 0) b.addSelf(disp[i], vis.self[i]);
  return b.finish();
}

/** Who called the focused function: its callers below it, weighted by its total time there. */
function callers(m: ProfileModel, vis: Visible, focus: number): ViewTree {
  const n = m.nodeCount;
  const total = vis.self.slice();
  for (let i = n - 1; i > 0; i--) if (vis.anc[i] === i) total[shownParent(m, vis, i)] += total[i];
  const inFocus = new Uint8Array(n);
  const b = new TreeBuilder(focus, m.frameCount);
  const walks: Walks = { at: [], next: [], w: [] };
  let sum = 0;
  for (let i = 1; i < n; i++) {
    if (vis.anc[i] !== i) continue;
    const above = inFocus[shownParent(m, vis, i)];
    const isFocus = m.nodeFrame[i] === focus;
    inFocus[i] = above || isFocus ? 1 : 0;
    if (!isFocus || above || total[i] === 0) continue;
    walks.at.push(0);
    walks.next.push(shownParent(m, vis, i));
    walks.w.push(total[i]);
    sum += total[i];
  }
  expandCallers(m, vis, b, walks, sum * INVERTED_MIN_SHARE);
  return b.finish();
}
