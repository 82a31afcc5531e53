// The differential call tree of two runs (compare.html's flame graph): both runs' CPU trees
// (the busiest target thread over the load window, the views compare-functions reads) merged
// by call path, a path's frames matched by function name, file and layer (a fix moves lines),
// with each node's self CPU time per completed request before and after. Per request, not per
// second: a faster server does more work per second. Idle time is left out (it is no CPU).

import type { CallTree } from '../profile/call-tree.js';
import { FRAME_KINDS } from '../profile/call-tree.js';
import type { DiffTree } from '../report/compare-schema.js';

/** A path is kept when it holds at least this share of the larger run's CPU per request; smaller ones fold into their caller. */
export const DIFF_MIN_SHARE = 0.001;

const IDLE = FRAME_KINDS.indexOf('idle');

class Builder {
  readonly frames = { name: [] as string[], file: [] as string[], kind: [] as number[] };
  readonly parent = [-1];
  readonly frame = [-1];
  readonly self: [number[], number[]] = [[0], [0]];
  private readonly frameIds = new Map<string, number>();
  private readonly children = new Map<string, number>();

  frameOf(name: string, file: string, kind: number): number {
    const key = `${name}\u0000${file}\u0000${kind}`;
    let id = this.frameIds.get(key);
    if (id === undefined) {
      id = this.frames.name.length;
      this.frames.name.push(name);
      this.frames.file.push(file);
      this.frames.kind.push(kind);
      this.frameIds.set(key, id);
    }
    return id;
  }

  child(parent: number, frame: number): number {
    const key = `${parent}:${frame}`;
    let id = this.children.get(key);
    if (id === undefined) {
      id = this.parent.length;
      this.parent.push(parent);
      this.frame.push(frame);
      this.self[0].push(0);
      this.self[1].push(0);
      this.children.set(key, id);
    }
    return id;
  }

  add(side: 0 | 1, tree: CallTree, requests: number): void {
    const map = new Int32Array(tree.frame.length).fill(-1);
    map[0] = 0;
    for (let i = 1; i < tree.frame.length; i++) {
      const p = map[tree.parent[i]];
      if (p < 0) continue;
      const f = tree.frames[tree.frame[i]];
      const kind = Math.max(0, FRAME_KINDS.indexOf(f.kind));
      if (kind === IDLE) continue;
      map[i] = this.child(p, this.frameOf(f.name, f.file, kind));
      if (tree.self[i] > 0) this.self[side][map[i]] += tree.self[i] / requests;
    }
  }
}

export function diffTree(before: CallTree, beforeRequests: number, after: CallTree, afterRequests: number): DiffTree {
  const b = new Builder();
  b.add(0, before, Math.max(1, beforeRequests));
  b.add(1, after, Math.max(1, afterRequests));
  const n = b.parent.length;
  const total: [Float64Array, Float64Array] = [Float64Array.from(b.self[0]), Float64Array.from(b.self[1])];
  for (let i = n - 1; i > 0; i--) for (const s of [0, 1]) total[s][b.parent[i]] += total[s][i];
  const min = Math.max(total[0][0], total[1][0]) * DIFF_MIN_SHARE;
  // Keep the heavy paths (a kept node's callers are heavier, so they are kept too); a light
  // path's time folds into its nearest kept caller, so the totals stay whole.
  const keep = new Int32Array(n).fill(-1);
  const out: DiffTree = { frames: b.frames, parent: [-1], frame: [-1], selfBefore: [b.self[0][0]], selfAfter: [b.self[1][0]] };
  keep[0] = 0;
  const owner = new Int32Array(n);
  for (let i = 1; i < n; i++) {
    const p = b.parent[i];
    if (keep[p] >= 0 && Math.max(total[0][i], total[1][i]) >= min) {
      keep[i] = out.parent.length;
      owner[i] = keep[i];
      out.parent.push(keep[p]);
      out.frame.push(b.frame[i]);
      out.selfBefore.push(b.self[0][i]);
      out.selfAfter.push(b.self[1][i]);
    } else {
      owner[i] = keep[p] >= 0 ? keep[p] : owner[p];
      out.selfBefore[owner[i]] += b.self[0][i];
      out.selfAfter[owner[i]] += b.self[1][i];
    }
  }
  return out;
}
