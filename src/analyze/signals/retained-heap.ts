// What the app still held after the load, from the agent's retained heap profile
// (heap-retained-<pid>-<tid>.heapprofile, `--heap`): the heap sampler restarted halfway through
// the load without keeping collected objects and stopped right after a full GC once the load was
// over, so its samples are the objects allocated in the second half that nothing let go of (a
// leak's growth), free of the garbage that fills the allocation view. Owners are credited by
// src/profile/retained-owners.ts (allocated, stored, loaded). Used by memory-leak; gc-pressure
// keeps the allocation view (signals/allocation-view.ts).

import type { ProfileRef, RunData } from '../../run-dir/run-data.js';
import type { CallTree, Frame } from '../../profile/call-tree.js';
import { runHeapProfile } from '../../profile/run-heap-profile.js';
import { buildHeapTree } from '../../profile/build-heap-tree.js';
import { retainedOwners, type RetainedOwner } from '../../profile/retained-owners.js';
import { runResolver } from '../../profile/run-source-maps.js';
import { busiestThread, loadWindow } from './load-window.js';
import { cpuViewOf } from './cpu-view.js';
import { perRun } from '../../run-dir/per-run.js';
import { leakHolder } from './leak-holder.js';
import { frameCulprit } from './culprit.js';

export interface RetainedSite {
  frame: Frame;
  /** Bytes credited (sampled), and how: allocated in it, stored by it, loaded by it. */
  bytes: number;
  share: number;
  allocated: number;
  stored: number;
  loaded: number;
  /** The top-level code of the module it loaded that allocated most of `loaded`. */
  module?: Frame;
}

export interface RetainedView {
  /** Epoch ms the retained sampling started (halfway through the load) and stopped (after the post-load GC). */
  from: number;
  to: number;
  /** Sampled bytes still alive after the load (V8 scales each sample to the bytes it stands for). */
  totalBytes: number;
  /** App functions by bytes credited, largest first. */
  sites: RetainedSite[];
  /** Allocated with no app frame on the stack, by the frame that allocated them, largest first. */
  unowned: { frame: Frame; bytes: number; share: number; storedBy?: Frame }[];
  unownedShare: number;
  /** Share of the bytes no app function could be credited with. */
  unknownShare: number;
  /** The site to name, when one holds RETAINED_CULPRIT_MIN_SHARE: see culpritOf. */
  culprit?: RetainedSite;
  /**
   * The culprit is the one app function the top site calls (CPU profile), which V8 inlined into
   * it (see culpritOf): `inlinedInto` is that top site.
   */
  inlinedInto?: Frame;
  /**
   * The app functions the top site calls in the CPU profile, when it calls several (they may hold
   * its bytes); with `inlinedInto`, the culprit is the only one of them that stores into a
   * long-lived collection.
   */
  callees?: Frame[];
}

/** A function must be credited with this share of the retained bytes to be named. */
export const RETAINED_CULPRIT_MIN_SHARE = 0.1;

/** The retained view of the busiest target thread (else the largest), or undefined when the run has none. */
export const retainedOf: (run: RunData) => RetainedView | undefined = perRun((run) => load(run) ?? undefined);

function chooseProfile(run: RunData): ProfileRef | undefined {
  const refs = run.profiles.filter((p) => p.kind === 'heap-retained' && !p.unusable);
  const busiest = busiestThread(run, loadWindow(run));
  return refs.find((p) => busiest && p.pid === busiest.pid && p.threadId === busiest.threadId) ?? refs[0];
}

function load(run: RunData): RetainedView | null {
  const ref = chooseProfile(run);
  if (!ref) return null;
  let tree: CallTree;
  try {
    tree = buildHeapTree(runHeapProfile(run, ref), { cwd: run.cwd, resolver: runResolver(run) });
  } catch {
    return null;
  }
  if (tree.totalUs <= 0) return null;
  const owners = retainedOwners(tree);
  const all = owners.totalBytes;
  const site = (o: RetainedOwner): RetainedSite => ({
    frame: tree.frames[o.frame],
    bytes: o.bytes,
    share: o.bytes / all,
    allocated: o.allocated,
    stored: o.stored,
    loaded: o.loaded,
    ...(o.module !== undefined ? { module: tree.frames[o.module] } : {}),
  });
  const sites = owners.owners.slice(0, 20).map(site);
  const view: RetainedView = {
    from: ref.start,
    to: ref.end,
    totalBytes: all,
    sites,
    unowned: owners.unowned.slice(0, 5).map((u) => ({
      frame: tree.frames[u.frame],
      bytes: u.bytes,
      share: u.bytes / all,
      ...(u.storedBy !== undefined ? { storedBy: tree.frames[u.storedBy] } : {}),
    })),
    unownedShare: owners.unownedBytes / all,
    unknownShare: owners.unknownBytes / all,
  };
  return Object.assign(view, culpritOf(run, sites));
}

const sameFrame = (a: Frame, b: Frame): boolean => a.name === b.name && a.file === b.file && a.line === b.line;

/**
 * The top site, if it holds RETAINED_CULPRIT_MIN_SHARE. V8's heap profiler charges what an
 * inlined function allocates to the function it was inlined into, and halfway through the load
 * the hot path is optimized: a request handler that calls `recordRequest(req)` shows as
 * allocating the record itself. When the top site allocated retained bytes itself and the CPU
 * profile (whose inlined frames are restored, see docs/profile-model.md) shows it calling exactly
 * one app function, that function is named (with the bytes of both), its caller said: a handler's
 * own code makes per-request garbage, and what it keeps it mostly keeps through what it calls.
 * Several app callees are listed instead: the profile cannot tell which one allocated.
 */
function culpritOf(run: RunData, sites: RetainedSite[]): Pick<RetainedView, 'culprit' | 'inlinedInto' | 'callees'> {
  const top = sites[0];
  if (!top || top.share < RETAINED_CULPRIT_MIN_SHARE || top.frame.kind !== 'app') return {};
  const callees = appCalleesOf(run, top.frame);
  const keeper = callees.length === 1 ? callees[0] : callees.length > 1 ? soleStorer(run, top.frame, callees) : undefined;
  if (keeper && top.allocated > 0) {
    const callee = sites.find((s) => sameFrame(s.frame, keeper));
    const bytes = top.bytes + (callee?.bytes ?? 0);
    return {
      culprit: { ...top, frame: keeper, bytes, share: bytes / (top.bytes / top.share) },
      inlinedInto: top.frame,
      ...(callees.length > 1 ? { callees: callees.slice(0, 3) } : {}),
    };
  }
  return { culprit: top, ...(callees.length > 1 ? { callees: callees.slice(0, 3) } : {}) };
}

/**
 * Of several app callees, the one that keeps what it is given: its source stores into a
 * collection that outlives the call (leak-holder.ts: a module-level or closure's Map or array,
 * an object's property), when it is the only one that does and the caller itself stores into
 * none. A handler that builds a reply, looks up a cache and remembers the reply inlines all three;
 * only the one with `replies.set(...)` keeps anything.
 */
function soleStorer(run: RunData, caller: Frame, callees: Frame[]): Frame | undefined {
  const stores = (f: Frame): boolean => leakHolder(run.cwd, frameCulprit(f, run.cwd)) !== undefined;
  if (stores(caller)) return undefined;
  const storing = callees.filter(stores);
  return storing.length === 1 ? storing[0] : undefined;
}

/** The app functions `frame` calls directly in the CPU profile of the load, by their total time. */
function appCalleesOf(run: RunData, frame: Frame): Frame[] {
  const view = cpuViewOf(run);
  if (!view) return [];
  const t = view.tree;
  const time = new Map<number, number>();
  for (let i = 1; i < t.frame.length; i++) {
    const p = t.parent[i];
    if (p <= 0 || !sameFrame(t.frames[t.frame[p]], frame)) continue;
    const callee = t.frames[t.frame[i]];
    if (callee.kind !== 'app' || sameFrame(callee, frame)) continue;
    time.set(t.frame[i], (time.get(t.frame[i]) ?? 0) + t.total[i]);
  }
  return [...time].sort((a, b) => b[1] - a[1]).map(([f]) => t.frames[f]);
}
