// The CPU profile of a run as the analyzers see it: per function, self time after
// attribution (native, builtin, core and dependency work charged to the nearest app frame,
// see src/profile/attribution.ts) and what that time was spent on (JSON, crypto, regex,
// zlib...). Built once per run from the busiest target thread's profile, over the load window.

import type { ProfileRef, RunData } from '../../run-dir/run-data.js';
import type { CallTree, Frame } from '../../profile/call-tree.js';
import type { Hotspot } from '../../profile/hotspots.js';
import { parseCpuProfile, type CpuProfile } from '../../profile/cpu-profile.js';
import { activeTime } from '../../profile/active-time.js';
import { runCpuProfile } from '../../profile/run-cpu-profile.js';
import { readProfileFile } from '../../run-dir/read-profile-file.js';
import { buildCallTree } from '../../profile/build-call-tree.js';
import { hotspots } from '../../profile/hotspots.js';
import { nodeWork, workTotals, type WorkItem } from '../../profile/work-breakdown.js';
import { appOwners, chargedTo } from '../../profile/attribution.js';
import { pipelineTime } from '../../profile/response-pipeline.js';
import { busiestThread, loadWindow, targetThreads, type Window } from './load-window.js';
import { runResolver } from '../../profile/run-source-maps.js';
import { cpuStackSamples, type StackSamples } from '../../profile/stack-samples.js';
import type { ProfileWindow } from '../../profile/profile-window.js';
import { perRun } from '../../run-dir/per-run.js';

/** Functions kept per view (the long tail carries no finding). */
export const CPU_VIEW_FUNCTIONS = 200;

export interface FunctionCost {
  frameIndex: number;
  frame: Frame;
  /** Attributed self time, µs. */
  selfUs: number;
  totalUs: number;
}

export interface CpuView {
  tree: CallTree;
  /** Sampled time that was not idle, µs. */
  activeUs: number;
  totalUs: number;
  /** Functions by attributed self time, largest first. */
  functions: FunctionCost[];
  /** Work kinds over the whole profile, µs. */
  work: Map<string, number>;
  /** What one function's attributed time was spent on. */
  workOf(frameIndex: number): WorkItem[];
  /** The part of one function's attributed time that answered the request (see profile/response-pipeline.ts), µs. */
  pipelineOf(frameIndex: number): number;
  /** The profile and its epoch start, to build windowed trees (early vs late). */
  profile: CpuProfile;
  ref: ProfileRef;
  /** The window the tree covers; absent when it covers the whole profile. */
  window?: ProfileWindow;
}

/** The CPU view of the run's busiest profiled target thread, or undefined without a profile. */
export const cpuViewOf: (run: RunData) => CpuView | undefined = perRun((run) => loadView(run) ?? undefined);

/**
 * The profile of the busiest target thread; else the largest CPU profile of a target thread (of
 * any thread when the run has no telemetry to tell). Never a launcher's or a cluster primary's:
 * a wrapper's profile is not the app's, and guessing from it would name the wrong code.
 */
function chooseProfile(run: RunData, w: Window | null): ProfileRef | undefined {
  const targets = targetThreads(run);
  const isTarget = (p: ProfileRef) => run.threads.length === 0 || targets.some((t) => t.pid === p.pid && t.threadId === p.threadId);
  const cpu = run.profiles.filter((p) => p.kind === 'cpu' && !p.unusable && isTarget(p));
  const busiest = busiestThread(run, w);
  return (
    cpu.find((p) => busiest && p.pid === busiest.pid && p.threadId === busiest.threadId) ??
    [...cpu].sort((a, b) => b.end - b.start - (a.end - a.start))[0]
  );
}

/** Builds a tree of the profile, restricted to [startMs, endMs] (epoch) when given. */
export function treeOf(run: RunData, profile: CpuProfile, ref: ProfileRef, startMs?: number, endMs?: number): CallTree {
  const window = windowOf(ref, startMs, endMs);
  return buildCallTree(profile, { cwd: run.cwd, resolver: runResolver(run), ...(window ? { window } : {}) });
}

function windowOf(ref: ProfileRef, startMs?: number, endMs?: number): ProfileWindow | undefined {
  return startMs !== undefined && endMs !== undefined && ref.start > 0 ? { startMs, endMs, profileStartEpochMs: ref.start } : undefined;
}

/** The view's samples in time order, over the same window as its tree (for stretches of time). */
export function samplesOf(run: RunData, view: CpuView): StackSamples {
  return cpuStackSamples(view.profile, { cwd: run.cwd, resolver: runResolver(run), ...(view.window ? { window: view.window } : {}) });
}

/** The profile `read` gives; undefined when it cannot be read or parsed (a bad file is no view: HOTPATH_ERR_PROFILE is left to readRunDir's warning). */
function readProfile(read: () => CpuProfile): CpuProfile | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

function loadView(run: RunData): CpuView | null {
  const w = loadWindow(run);
  const ref = chooseProfile(run, w);
  if (!ref) return null;
  const profile = readProfile(() => runCpuProfile(run, ref));
  if (!profile) return null;
  let window = w ? windowOf(ref, w.start, w.end) : undefined;
  let tree = treeOf(run, profile, ref, w?.start, w?.end);
  // A profile whose clock does not line up with the window still describes the load.
  if (tree.activeUs === 0 && window) {
    tree = treeOf(run, profile, ref);
    window = undefined;
  }
  if (tree.activeUs === 0) return null;
  const functions = hotspots(tree, { limit: CPU_VIEW_FUNCTIONS }).map((h) => ({
    frameIndex: h.frame,
    frame: tree.frames[h.frame],
    selfUs: h.selfMs * 1000,
    totalUs: h.totalMs * 1000,
  }));
  let breakdowns: Map<number, WorkItem[]> | undefined;
  let pipeline: Float64Array | undefined;
  return {
    tree,
    activeUs: tree.activeUs,
    totalUs: tree.totalUs,
    functions,
    work: workTotals(tree),
    profile,
    ref,
    ...(window ? { window } : {}),
    workOf(frameIndex) {
      breakdowns ??= allBreakdowns(tree);
      return breakdowns.get(frameIndex) ?? [];
    },
    pipelineOf(frameIndex) {
      pipeline ??= pipelineTime(tree);
      return pipeline[frameIndex] ?? 0;
    },
  };
}

/**
 * Every function's work breakdown in one pass over the tree (the same rule as
 * src/profile/work-breakdown.ts's workBreakdown, which walks the whole tree per function).
 */
function allBreakdowns(tree: CallTree): Map<number, WorkItem[]> {
  const to = chargedTo(tree, appOwners(tree));
  const work = nodeWork(tree);
  const inline = new Map<number, { work: WorkItem['work']; label: string; us: number }[]>();
  for (const e of tree.inlineWork ?? []) inline.set(e.node, [...(inline.get(e.node) ?? []), e]);
  const acc = new Map<number, Map<string, WorkItem>>();
  const add = (frame: number, w: { work: WorkItem['work']; label: string }, us: number) => {
    if (us <= 0) return;
    const items = acc.get(frame) ?? new Map<string, WorkItem>();
    acc.set(frame, items);
    const e = items.get(w.label);
    if (e) e.us += us;
    else items.set(w.label, { work: w.work, label: w.label, us, share: 0 });
  };
  for (let i = 1; i < tree.frame.length; i++) {
    if (tree.self[i] <= 0) continue;
    const frame = tree.frame[to[i]];
    let us = tree.self[i];
    for (const e of inline.get(i) ?? []) {
      add(frame, e, e.us);
      us -= e.us;
    }
    add(frame, work[i], us);
  }
  const out = new Map<number, WorkItem[]>();
  for (const [frame, items] of acc) {
    const list = [...items.values()].sort((a, b) => b.us - a.us);
    const total = list.reduce((a, e) => a + e.us, 0);
    for (const e of list) e.share = total > 0 ? e.us / total : 0;
    out.set(frame, list);
  }
  return out;
}

/**
 * Sampled and non-idle time of a thread's CPU profile over the window (the whole profile when its
 * clock does not line up with the window), without a call tree; undefined without a readable
 * profile of that thread.
 */
export function threadActiveTime(
  run: RunData,
  thread: { pid: number; threadId: number },
  w: Window | null,
): { totalUs: number; activeUs: number } | undefined {
  const ref = run.profiles
    .filter((p) => p.kind === 'cpu' && !p.unusable && p.pid === thread.pid && p.threadId === thread.threadId)
    .sort((a, b) => b.end - b.start - (a.end - a.start))[0];
  if (!ref) return undefined;
  // Idle time needs no inlined frames expanded: the plain profile.
  const profile = readProfile(() => parseCpuProfile(readProfileFile(ref.path), ref.path));
  if (!profile) return undefined;
  const windowed = w && ref.start > 0 ? activeTime(profile, { startMs: w.start, endMs: w.end, profileStartEpochMs: ref.start }) : undefined;
  return windowed && windowed.totalUs > 0 ? windowed : activeTime(profile);
}

/** App functions only, largest attributed self time first. */
export function appFunctions(view: CpuView): FunctionCost[] {
  return view.functions.filter((f) => f.frame.kind === 'app');
}

/** The app function with the most attributed self time, and its share of the active CPU. */
export function topAppFunction(view: CpuView | undefined): { top: FunctionCost; share: number } | undefined {
  const top = view ? appFunctions(view)[0] : undefined;
  return top && view && view.activeUs > 0 ? { top, share: top.selfUs / view.activeUs } : undefined;
}

export function hotspotsOf(run: RunData): Hotspot[] {
  const view = cpuViewOf(run);
  if (!view || view.activeUs === 0) return [];
  // hotpath's own agent code is its overhead, never a hotspot of the app.
  const rows = view.functions
    .filter((f) => f.frame.kind !== 'agent' && (f.frame.kind !== 'program' || f.selfUs > 0))
    .map((f) => ({
      function: f.frame.name,
      file: f.frame.file,
      line: f.frame.line,
      ...(f.frame.column ? { column: f.frame.column } : {}),
      kind: f.frame.kind,
      selfMs: Math.round(f.selfUs) / 1000,
      selfShare: Math.round((f.selfUs / view.activeUs) * 10000) / 10000,
      totalMs: Math.round(f.totalUs) / 1000,
      totalShare: Math.round((f.totalUs / view.activeUs) * 10000) / 10000,
    }));
  // App code first among functions of similar weight: stable sort by self time, app before others on ties.
  return rows.sort((a, b) => b.selfMs - a.selfMs || Number(b.kind === 'app') - Number(a.kind === 'app'));
}
