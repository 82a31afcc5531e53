// Event-loop and CPU figures over the load window, shared by the blocking, I/O-wait,
// serialization and healthy analyzers so they judge the same numbers.

import type { RunData, ThreadTelemetry } from '../../run-dir/run-data.js';
import type { SampleMessage } from '../../agent/protocol.js';
import { loadWindow, loopDelaySamples, targetThreads, windowSamples, windowStalls, type Window } from './load-window.js';
import { max, percentile, sum, weightedMean, weightedPercentile } from './stats.js';
import { latencyWeight } from './latency-weight.js';
import { cpuViewOf, threadActiveTime } from './cpu-view.js';
import { loopNeverSlept, SATURATED_ELU } from './immediate-yields.js';
import { perRun } from '../../run-dir/per-run.js';
import { isPreemptedStall } from './preempted-stall.js';
import { nodeThreadCpuUs, threadCpuUs } from './thread-cpu.js';

export interface LoopStats {
  durationMs: number;
  samples: number;
  eluMean: number;
  eldP50Ms: number;
  eldP99Ms: number;
  eldMaxMs: number;
  /** The stalls the thread's own work made (see preempted-stall.ts): the longest, and how many. */
  stallMaxMs: number;
  stallCount: number;
  /** Stalls during which the thread was mostly kept off the cores by other processes: starvation, not blocks. */
  preemptedStallMaxMs: number;
  preemptedStalls: number;
  requests: number;
  requestsPerSecond: number;
  /**
   * The app's CPU per request, ms: the serving threads' own CPU when every thread measures it
   * (node's thread CPU, else the on-CPU time the agent worker reads from /proc), else the
   * process's; without the agent's own measured CPU on what was counted (see appCpuUs).
   */
  cpuPerRequestMs: number;
  /** Server-side latency, ms. */
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Requests in flight, mean over the window. */
  inFlightMean: number;
  /** Mean count per active-resource type. */
  resources: Record<string, number>;
  /** Per resource type, the 10th and 90th percentile of its count over the samples: how steady it was. */
  resourceBands: Record<string, { p10: number; p90: number }>;
  openConnectionsMean: number;
  /**
   * Active resources per type at rest: in the last sample (mostly) before the window without a request in
   * flight, summed over the target threads (empty when there is none). What the process holds
   * before any request (a child's stdio and IPC pipes, its intervals) is its own plumbing.
   */
  resourcesAtRest: Record<string, number>;
  /**
   * Child processes the target started during the load and kept running, on average over the
   * window: its ProcessWrap handles (one per live ChildProcess) beyond those it held at rest. A
   * child takes a core of its own on the same machine, and spawning one holds the loop until the
   * child has started.
   */
  childProcessesMean: number;
  /** CPU used, in cores (the serving thread when measured, else the process). */
  coresMean: number;
  /**
   * CPU per unit of loop activity (cores / ELU). About 1 when the loop's busy time is its own
   * work; well below 1 when the loop was "active" without getting the CPU (other processes
   * competing for the cores): then delays and stalls measure the machine, not the code.
   */
  cpuPerActive: number;
}

export const loopStats: (run: RunData) => LoopStats | undefined = perRun(computeLoopStats);

/**
 * The CPU the app's serving threads used (µs) over their samples: the threads' own CPU when every
 * thread measures it (threadUser/threadSystem, Node 23.9+; else threadOnCpu, read by the agent's
 * worker from /proc on Linux, exact over a sum of samples: see threadOwnCpuUs), else the process's. The process's
 * CPU also carries the libuv pool (an fs.promises read), V8's compiler and GC helper threads, and
 * the agent's worker and profiler threads, which grow per request on a slow or busy machine (fewer
 * requests share the same warm-up): a healthy Express route with one fetch and one file read per
 * request read 0.98 ms of process CPU per request on a quiet core and 1.3-1.55 ms at a load
 * average of 16, its loop thread 0.66 and 0.85-1.04 ms. The loop's own CPU is what caps the
 * requests it serves, as on Node 24 before. The agent's own measured CPU on what was counted (its
 * callbacks on the loop; with the process's figure also its worker and profiler threads) is left
 * out: it is hotpath's cost, not the app's.
 */
export function appCpuUs(perThread: readonly SampleMessage[][]): number {
  const threaded = perThread.map(threadOwnCpuUs);
  if (threaded.every((us) => us !== undefined)) return Math.max(0, sum(threaded as number[]));
  const agentUs = (s: SampleMessage): number => (s.agent ? s.agent.mainUs + (s.agent.workerUs ?? 0) + (s.agent.profilerUs ?? 0) : 0);
  const samples = perThread.flat();
  // node's thread CPU on some samples only (older agents): each sample's own figure, as before.
  return Math.max(
    0,
    sum(
      samples.map((s) => {
        const node = nodeThreadCpuUs(s.cpu);
        return node !== undefined ? node - (s.agent?.mainUs ?? 0) : s.cpu.user + s.cpu.system - agentUs(s);
      }),
    ),
  );
}

/**
 * Thread CPU measured on at least this share of a thread's time in the window (the agent worker's
 * /proc reading starts once it runs: its first reading is a baseline) stands for the whole window.
 */
export const THREAD_CPU_MIN_COVERAGE = 0.5;

/**
 * One thread's own CPU over its samples without the agent's callbacks on it (µs), from its first
 * reading on and scaled to all its samples' time; undefined when it is not measured on every
 * sample after the first reading or covers less than THREAD_CPU_MIN_COVERAGE of the time.
 */
function threadOwnCpuUs(samples: readonly SampleMessage[]): number | undefined {
  const own = (s: SampleMessage): number | undefined => threadCpuUs(s.cpu);
  const first = samples.findIndex((s) => own(s) !== undefined);
  if (first < 0) return undefined;
  // node's thread CPU covers its first sample; the /proc reading's first is the baseline (0).
  const counted = samples.slice(samples[first].cpu.threadUser !== undefined ? first : first + 1);
  let us = 0;
  for (const s of counted) {
    const x = own(s);
    if (x === undefined) return undefined;
    us += x - (s.agent?.mainUs ?? 0);
  }
  const allMs = sum(samples.map((s) => s.intervalMs));
  const countedMs = sum(counted.map((s) => s.intervalMs));
  if (allMs <= 0 || countedMs < THREAD_CPU_MIN_COVERAGE * allMs) return undefined;
  return (us * allMs) / countedMs;
}

function computeLoopStats(run: RunData): LoopStats | undefined {
  const w = loadWindow(run);
  const threads = targetThreads(run);
  const perThreadSamples = threads.map((t) => windowSamples(t, w));
  const samples = perThreadSamples.flat();
  if (samples.length === 0) return undefined;
  // Loop delay without the pauses the agent caused (the --heap switch mid-load).
  const delay = threads.flatMap((t) => loopDelaySamples(t, w));
  const durationMs = w?.durationMs ?? sum(samples.map((s) => s.intervalMs));
  const allStalls = threads.flatMap((t) => windowStalls(t, w));
  const stalls = allStalls.filter((st) => !isPreemptedStall(st));
  const preempted = allStalls.filter((st) => isPreemptedStall(st));
  const http = samples.map((s) => s.http).filter((h) => h !== undefined);
  const requests = sum(http.map((h) => h.finished));
  const cpuUs = appCpuUs(perThreadSamples);
  const counts = http.map(latencyWeight);
  const resources: Record<string, number> = {};
  for (const s of samples) for (const [k, v] of Object.entries(s.resources)) resources[k] = (resources[k] ?? 0) + v / samples.length;
  const resourceBands: Record<string, { p10: number; p90: number }> = {};
  for (const k of Object.keys(resources)) {
    const perSample = samples.map((s) => s.resources[k] ?? 0);
    resourceBands[k] = { p10: percentile(perSample, 10), p90: percentile(perSample, 90) };
  }
  const perThread = threads.map((t, i) => {
    const own = perThreadSamples[i];
    const sampledElu = weightedMean(
      own.map((s) => s.elu),
      own.map((s) => s.intervalMs),
    );
    // A loop that never slept: its profile's (idle) samples are polls that returned at once, not waits.
    const profiled = loopNeverSlept(own) ? undefined : profiledUtilization(run, t, w, sampledElu);
    return { utilization: profiled ?? sampledElu, ms: sum(own.map((s) => s.intervalMs)) };
  });
  const eluMean = weightedMean(
    perThread.map((t) => t.utilization),
    perThread.map((t) => t.ms),
  );
  const coresMean = durationMs > 0 ? cpuUs / 1000 / (durationMs * threads.length) : 0;
  const rest = atRest(threads, w);
  return {
    durationMs,
    samples: samples.length,
    coresMean,
    cpuPerActive: eluMean > 0 ? coresMean / eluMean : 1,
    eluMean,
    eldP50Ms: percentile(
      delay.map((s) => s.eld.p50),
      50,
    ),
    eldP99Ms: percentile(
      delay.map((s) => s.eld.p99),
      99,
    ),
    eldMaxMs: max(delay.map((s) => s.eld.max)),
    stallMaxMs: max(stalls.map((s) => s.durationMs)),
    stallCount: stalls.length,
    preemptedStallMaxMs: max(preempted.map((st) => st.durationMs)),
    preemptedStalls: preempted.length,
    requests,
    requestsPerSecond: durationMs > 0 ? (requests * 1000) / durationMs : 0,
    cpuPerRequestMs: requests > 0 ? cpuUs / 1000 / requests : 0,
    latencyP50Ms: weightedPercentile(
      http.map((h) => h.latency.p50),
      counts,
      50,
    ),
    latencyP99Ms: weightedMean(
      http.map((h) => h.latency.p99),
      counts,
    ),
    inFlightMean: http.length > 0 ? sum(http.map((h) => h.active)) / http.length : 0,
    resources,
    resourceBands,
    openConnectionsMean: http.length > 0 ? sum(http.map((h) => h.openConnections)) / http.length : 0,
    resourcesAtRest: rest,
    childProcessesMean: Math.max(0, (resources.ProcessWrap ?? 0) - (rest.ProcessWrap ?? 0) / Math.max(1, threads.length)),
  };
}

/** Resources in each thread's last sample before the window with no request in flight, summed. */
function atRest(threads: ThreadTelemetry[], w: Window | null): Record<string, number> {
  const out: Record<string, number> = {};
  if (!w) return out;
  for (const t of threads) {
    // A sample covers [t - intervalMs, t]: before the window when most of it is.
    const rest = t.samples.findLast((s) => s.t - s.intervalMs / 2 < w.start && (s.http === undefined || s.http.active === 0));
    for (const [k, v] of Object.entries(rest?.resources ?? {})) out[k] = (out[k] ?? 0) + v;
  }
  return out;
}

/**
 * A thread's loop utilization from its CPU profile, when one covers the window: while a profile
 * runs, ELU reads high on a partly idle loop (V8's sampling signal interrupts `epoll_wait` and
 * libuv drops the idle time of an interrupted wait: an idle server read ELU 0.63 against 98 %
 * idle samples), whereas the profile marks the samples taken while the loop waited as (idle).
 * A profile without any idle sample is trusted only when ELU says the loop was saturated too (a
 * node that marked no idle time would read as 100 % busy). The busiest thread's comes from the
 * run's CPU view; other threads' (cluster workers) from their own profile's idle samples.
 */
function profiledUtilization(run: RunData, thread: ThreadTelemetry, w: Window | null, sampledElu: number): number | undefined {
  const view = cpuViewOf(run);
  const time =
    view && view.ref.pid === thread.pid && view.ref.threadId === thread.threadId
      ? { activeUs: view.activeUs, totalUs: view.totalUs }
      : threadActiveTime(run, thread, w);
  if (!time || time.totalUs <= 0) return undefined;
  const active = time.activeUs / time.totalUs;
  if (active >= 1 && sampledElu < SATURATED_ELU) return undefined;
  return active;
}
