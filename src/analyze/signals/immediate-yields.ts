// Requests that yield to the event loop over and over: a handler that awaits a setImmediate per
// item (or per step) of its work needs thousands of turns of the loop per request, and each turn
// costs more than a small item. Seen from inside: an immediate is queued at nearly every sample
// (libuv then polls without waiting, so the loop never sleeps), about one per request in flight,
// and the CPU profile holds the setImmediate calls, under the app function that makes them.
// Pure: reads the run's samples and CPU view.

import type { SampleMessage } from '../../agent/protocol.js';
import type { RunData } from '../../run-dir/run-data.js';
import type { CallTree } from '../../profile/call-tree.js';
import { ownerOf } from '../../profile/anonymous-names.js';
import { cpuViewOf } from './cpu-view.js';
import { loadWindow, targetThreads, windowSamples } from './load-window.js';
import { perRun } from '../../run-dir/per-run.js';

/** Sampled ELU from which the loop counts as saturated (it agrees with a profile that holds no idle samples). */
export const SATURATED_ELU = 0.95;
/**
 * Share of the samples with requests in flight that found immediates queued (`Immediate` in the
 * active resources) from which the loop is taken to never sleep: with an immediate queued, libuv polls
 * without waiting, and V8 still marks every poll (idle) in the CPU profile. A handler yielding
 * per item with `setImmediate` read ELU 1.0 against 53 % idle samples, while its loop turned
 * ~90,000 times a second and served requests that needed 10 µs of work in 20 ms.
 */
export const SPINNING_IMMEDIATE_SHARE = 0.8;
/** A loaded loop: requests were in flight at least at this share of the samples. */
export const YIELDS_MIN_SERVING_SHARE = 0.5;
/** Immediates queued on average, per request in flight, for the requests to be the ones yielding. */
export const YIELDS_MIN_PER_IN_FLIGHT = 0.5;

/**
 * A loop that never slept: immediates queued at nearly every sample. A ref'd immediate keeps
 * Node's idle handle started, and libuv polls with a zero timeout while one is: the loop cannot
 * wait for I/O then, whatever ELU reads. ELU is not asked: on a busy machine a loop turning
 * through immediates is preempted inside its zero-timeout `epoll_wait` (the kernel lets another
 * process run there) and ELU books that time as idle. The same yielding scenario read ELU 1.0
 * alone on the cores and 0.67 beside one spinning process per core, with immediates queued at
 * every sample in both.
 */
export function loopNeverSlept(samples: readonly SampleMessage[]): boolean {
  const serving = samples.filter((s) => (s.http?.active ?? 0) > 0).length;
  return serving >= YIELDS_MIN_SERVING_SHARE * samples.length && immediatesQueuedShare(samples) >= SPINNING_IMMEDIATE_SHARE;
}

/**
 * Share of the samples that found requests in flight which found immediates queued too. A sample
 * without one is a moment the server had nothing to do: a load generator that fell behind (on a
 * busy machine the requests run in lockstep, finish together, and the next ones come late), not
 * a loop that slept between its own requests' turns.
 */
function immediatesQueuedShare(samples: readonly SampleMessage[]): number {
  const serving = samples.filter((s) => (s.http?.active ?? 0) > 0);
  return serving.length === 0 ? 0 : serving.filter((s) => (s.resources.Immediate ?? 0) > 0).length / serving.length;
}

export interface ImmediateYields {
  /** Share of the samples with requests in flight that had immediates queued, their mean count, and the requests in flight. */
  queuedShare: number;
  queuedMean: number;
  inFlightMean: number;
  /** The app function that yields (frame index), and the helper it yields through, when it does. */
  yielder: number;
  through?: number;
  /** Share of the active CPU under the setImmediate calls. */
  share: number;
}

/** The requests' immediates, when the loop of the profiled thread never slept for them; else undefined. */
export const immediateYields: (run: RunData) => ImmediateYields | undefined = perRun(computeImmediateYields);

function computeImmediateYields(run: RunData): ImmediateYields | undefined {
  const view = cpuViewOf(run);
  if (!view || view.activeUs <= 0) return undefined;
  const w = loadWindow(run);
  const thread = targetThreads(run).find((t) => t.pid === view.ref.pid && t.threadId === view.ref.threadId);
  const samples = thread ? windowSamples(thread, w) : [];
  if (!loopNeverSlept(samples)) return undefined;
  const http = samples.map((s) => s.http).filter((h) => h !== undefined);
  const inFlightMean = http.length > 0 ? http.reduce((a, h) => a + h.active, 0) / http.length : 0;
  const queuedMean = samples.reduce((a, s) => a + (s.resources.Immediate ?? 0), 0) / samples.length;
  if (inFlightMean < 1 || queuedMean < YIELDS_MIN_PER_IN_FLIGHT * inFlightMean) return undefined;
  const site = yieldSite(view.tree);
  if (!site) return undefined;
  return { queuedShare: immediatesQueuedShare(samples), queuedMean, inFlightMean, ...site, share: site.us / view.activeUs };
}

/** setImmediate of node:timers, and of node:timers/promises (`await setImmediate()`). */
function isSetImmediate(tree: CallTree, frame: number): boolean {
  const f = tree.frames[frame];
  return f.name === 'setImmediate' && /^node:timers(\/promises)?$/.test(f.file);
}

/**
 * The app function that yields, by the time of the setImmediate calls under it: walking up from
 * each call, the first app function that is resumed from the microtask queue (an async function
 * awaiting the immediate: the loop is there, whether it queues the immediate itself, inline, or
 * through a helper like `yieldToLoop()`, which is then `through`); without one (callback style,
 * `setImmediate(processNextChunk)`), the first app function above the call. A closure written
 * inside a function (a Promise executor) counts as that function.
 */
function yieldSite(tree: CallTree): { yielder: number; through?: number; us: number } | undefined {
  const resumed = resumedFunctions(tree);
  const byApp = new Map<string, { frame: number; through?: number; us: number }>();
  let us = 0;
  for (let i = 1; i < tree.frame.length; i++) {
    if (!isSetImmediate(tree, tree.frame[i])) continue;
    us += tree.total[i];
    const chain: number[] = [];
    for (let j = tree.parent[i]; j > 0; j = tree.parent[j]) {
      const f = tree.frames[tree.frame[j]];
      if (f.kind !== 'app') continue;
      const named = namedFrame(tree, tree.frame[j]);
      if (chain[chain.length - 1] !== named) chain.push(named);
      if (resumed.has(ownerKey(tree, named))) break;
    }
    const last = chain[chain.length - 1];
    if (last !== undefined) {
      const yielder = resumed.has(ownerKey(tree, last)) ? last : chain[0];
      const through = yielder !== chain[0] ? chain[0] : undefined;
      const key = `${yielder}\0${through ?? ''}`;
      const acc = byApp.get(key) ?? { frame: yielder, ...(through !== undefined ? { through } : {}), us: 0 };
      acc.us += tree.total[i];
      byApp.set(key, acc);
    }
    i += tree.subtreeSize[i] - 1;
  }
  const top = [...byApp.values()].sort((a, b) => b.us - a.us)[0];
  return top ? { yielder: top.frame, ...(top.through !== undefined ? { through: top.through } : {}), us } : undefined;
}

const ownerKey = (tree: CallTree, frame: number) => `${tree.frames[frame].file}\0${ownerOf(tree.frames[frame].name)}`;

/** App functions (by owner) resumed from the microtask queue: an app frame right under runMicrotasks. */
function resumedFunctions(tree: CallTree): Set<string> {
  const out = new Set<string>();
  for (let i = 1; i < tree.frame.length; i++) {
    const f = tree.frames[tree.frame[i]];
    const p = tree.parent[i];
    if (f.kind === 'app' && p > 0 && tree.frames[tree.frame[p]].name === 'runMicrotasks') out.add(ownerKey(tree, tree.frame[i]));
  }
  return out;
}

/** The frame of the named function an anonymous frame ("(anonymous in f)") was written in, when the tree has it. */
function namedFrame(tree: CallTree, frame: number): number {
  const f = tree.frames[frame];
  const owner = ownerOf(f.name);
  if (owner === f.name) return frame;
  const named = tree.frames.findIndex((g) => g.name === owner && g.file === f.file);
  return named >= 0 ? named : frame;
}
