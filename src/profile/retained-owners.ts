// Who keeps what a retained heap profile holds (the agent's heap-retained-*.heapprofile: what was
// allocated in the last part of the load and was still alive after a full GC once it was over).
// A sample's bytes belong to the nearest app frame above it, as in the allocation view, with two
// exceptions where the allocating frame is not the code to fix:
//
// - stored: objects made with no app code on the stack, by Node core or a dependency (the
//   request's headers by node's HTTP parser, a body by body-parser's JSON.parse). The profile
//   cannot say who keeps them; the app code that ran within the same call (under the nearest
//   frame above the allocation that also has app code below it) and keeps objects of its own is
//   the likely keeper: a request log that pushes `{ headers, body }` allocates that record itself.
//   Work queued by the event loop (nextTick, timers, immediates) or the root links nothing.
// - loaded: the top-level code of a module (an app frame called by node's module loader) runs
//   when the module is loaded: allocations there that are still alive after a load belong to the
//   app code that loaded it (a module required anew per request, or deleted from require.cache).
//
//   (root) ─ parserOnIncoming ─ IncomingMessage      ← allocated, no app frame: "stored" by ─┐
//                             └ handler ─ [push]     ← the handler's own retained bytes  ◀───┘
//
// Pure: reads a heap CallTree only.

import type { CallTree } from './call-tree.js';
import { appOwners } from './attribution.js';

export interface RetainedOwner {
  /** Frame index of the app function. */
  frame: number;
  /** All bytes credited to it: the three below. */
  bytes: number;
  /** Allocated under it (dependency, core and native allocations it asked for included). */
  allocated: number;
  /** Allocated with no app frame on the stack, by code that ran within the same call as it. */
  stored: number;
  /** Allocated by the top-level code of modules it loaded. */
  loaded: number;
  /** Frame index of the top-level code of the module it loaded that allocated the most, when it loaded any. */
  module?: number;
}

export interface UnownedAllocation {
  /** Frame index of the (non-app) function that allocated with no app frame above it. */
  frame: number;
  bytes: number;
  /** The app function credited with keeping them, when one ran within the same call. */
  storedBy?: number;
}

export interface RetainedOwners {
  totalBytes: number;
  /** App functions by bytes credited, largest first. */
  owners: RetainedOwner[];
  /** Allocations with no app frame on the stack, by allocating frame, largest first. */
  unowned: UnownedAllocation[];
  unownedBytes: number;
  /** Of those, the bytes no app function could be credited with. */
  unknownBytes: number;
}

/** Node's module loader (CommonJS and ESM): an app frame right below it is a module's top-level code. */
const isLoader = (file: string): boolean => file.startsWith('node:internal/modules/');
/** Frames that run queued work (task queues, timers): unrelated callbacks meet there, so no credit crosses them. */
const isScheduler = (file: string): boolean => file === 'node:internal/process/task_queues' || file === 'node:internal/timers';

export function retainedOwners(tree: CallTree): RetainedOwners {
  const n = tree.frame.length;
  const owner = appOwners(tree);
  const fileOf = (node: number): string => tree.frames[tree.frame[node]].file;
  // The app node credited with what an app node allocates: itself, or for a module's top-level
  // code the app node above the loader (repeatedly: a module loaded by another module's top level).
  const creditOf = (app: number): { node: number; module?: number } => {
    let at = app;
    let module: number | undefined;
    for (let guard = 0; guard < 64; guard++) {
      const p = tree.parent[at];
      if (p <= 0 || !isLoader(fileOf(p))) break;
      const above = owner[p];
      if (above < 0) break;
      module ??= at;
      at = above;
    }
    return { node: at, ...(module !== undefined ? { module } : {}) };
  };
  const allocated = new Float64Array(n);
  const loaded = new Float64Array(n);
  /** Per module body frame, per crediting node: bytes loaded (to name the module). */
  const modules = new Map<number, Map<number, number>>();
  const own = new Float64Array(n);
  const unownedNodes: number[] = [];
  for (let i = 1; i < n; i++) {
    const bytes = tree.self[i];
    if (bytes <= 0) continue;
    if (owner[i] < 0) {
      unownedNodes.push(i);
      continue;
    }
    const c = creditOf(owner[i]);
    if (c.module !== undefined) {
      loaded[c.node] += bytes;
      const byModule = modules.get(c.node) ?? new Map<number, number>();
      const m = tree.frame[c.module];
      byModule.set(m, (byModule.get(m) ?? 0) + bytes);
      modules.set(c.node, byModule);
    } else {
      allocated[c.node] += bytes;
    }
    own[c.node] += bytes;
  }
  // Per node, the app node in its subtree holding the most bytes of its own (pre-order: a node's
  // descendants come after it, so a reverse pass folds children into parents).
  const best = new Int32Array(n).fill(-1);
  for (let i = n - 1; i >= 1; i--) {
    if (own[i] > 0 && (best[i] < 0 || own[i] > own[best[i]])) best[i] = i;
    const p = tree.parent[i];
    if (p >= 0 && best[i] >= 0 && (best[p] < 0 || own[best[i]] > own[best[p]])) best[p] = best[i];
  }
  const stored = new Float64Array(n);
  const unownedByFrame = new Map<number, UnownedAllocation>();
  let unownedBytes = 0;
  let unknownBytes = 0;
  for (const i of unownedNodes) {
    let keeper = -1;
    for (let x = i; x > 0 && !isScheduler(fileOf(x)); x = tree.parent[x]) {
      if (best[x] >= 0) {
        keeper = best[x];
        break;
      }
    }
    const bytes = tree.self[i];
    unownedBytes += bytes;
    if (keeper >= 0) stored[keeper] += bytes;
    else unknownBytes += bytes;
    const f = tree.frame[i];
    const entry = unownedByFrame.get(f) ?? { frame: f, bytes: 0 };
    entry.bytes += bytes;
    if (keeper >= 0 && entry.storedBy === undefined) entry.storedBy = tree.frame[keeper];
    unownedByFrame.set(f, entry);
  }
  const byFrame = new Map<number, RetainedOwner>();
  const moduleBytes = new Map<number, Map<number, number>>();
  for (let i = 1; i < n; i++) {
    const bytes = allocated[i] + loaded[i] + stored[i];
    if (bytes <= 0) continue;
    const f = tree.frame[i];
    const o = byFrame.get(f) ?? { frame: f, bytes: 0, allocated: 0, stored: 0, loaded: 0 };
    o.bytes += bytes;
    o.allocated += allocated[i];
    o.stored += stored[i];
    o.loaded += loaded[i];
    byFrame.set(f, o);
    const perModule = moduleBytes.get(f) ?? new Map<number, number>();
    for (const [m, b] of modules.get(i) ?? []) perModule.set(m, (perModule.get(m) ?? 0) + b);
    moduleBytes.set(f, perModule);
  }
  for (const o of byFrame.values()) {
    let top: [number, number] | undefined;
    for (const e of moduleBytes.get(o.frame) ?? []) if (!top || e[1] > top[1]) top = e;
    if (top) o.module = top[0];
  }
  return {
    totalBytes: tree.totalUs,
    owners: [...byFrame.values()].sort((a, b) => b.bytes - a.bytes),
    unowned: [...unownedByFrame.values()].sort((a, b) => b.bytes - a.bytes),
    unownedBytes,
    unknownBytes,
  };
}
