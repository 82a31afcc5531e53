// The agent's own time on the thread it runs in: what its callbacks take on the target's loop
// (the sampler, collectors and growth reports on their timers; the per-request subscribers and
// hooks), so a run can state what the agent cost the server it measured (docs/agent.md, Cost).
// Timer callbacks are timed in CPU time, not wall time (a callback the OS preempts on a busy
// machine would otherwise count the time other processes ran): this thread's CPU where node
// reads it (process.threadCpuUsage, 23.9+), else the process's (process.cpuUsage, µs: it also
// counts other threads' work meanwhile, little over a few short callbacks a second). Each read
// is a getrusage syscall, which costs more than the loop-delay timer's whole callback: timed at
// every call, the reads were the agent's largest single item in perf (a third of its timer
// work), so each timer is timed about TIMED_CALLS_PER_SECOND times a second, a timed call
// counting for the calls it stands for. Per-request paths are timed one call in
// OWN_TIME_EVERY, counted OWN_TIME_EVERY times (two clock reads per request would cost more
// than some of the paths they time), on the wall clock as they take well under a microsecond,
// each timing clipped at OWN_TIME_CLIP_MS (a longer one was preempted: ×64 it would swamp the
// figure). What node does for the agent outside its functions (building the channel messages,
// the call into a wrapper) and V8's profiling are not timed here.
import { performance } from 'node:perf_hooks';

/** One per-request call in this many is timed. */
export const OWN_TIME_EVERY = 64;
/** The most one timed per-request call may count, ms. */
export const OWN_TIME_CLIP_MS = 0.05;

/** Milliseconds of this thread spent in the agent's callbacks so far (per-request paths estimated). */
export const ownTime = { ms: 0 };

let left = OWN_TIME_EVERY;

/** A timer's callbacks are timed about this many times a second (see timedEvery). */
export const TIMED_CALLS_PER_SECOND = 5;

/** How many calls of a timer firing every `periodMs` one timed call stands for. */
export function timedEvery(periodMs: number): number {
  return Math.max(1, Math.round(1000 / periodMs / TIMED_CALLS_PER_SECOND));
}

/**
 * `fn`, with the CPU time of one call in `every` added to ownTime, `every` times (for the agent's
 * timer callbacks: the same work each time, or close to it).
 */
export function timed(fn: () => void, every = 1): () => void {
  let left = every;
  return () => {
    if (--left > 0) return fn();
    left = every;
    const t0 = cpuNowMs();
    try {
      fn();
    } finally {
      // NaN when the clock cannot be read: the call is not counted, and nothing throws.
      const ms = cpuNowMs() - t0;
      if (ms > 0) ownTime.ms += ms * every;
    }
  };
}

/** For a per-request path: the start time when this call is one of those timed, else -1. */
export function ownTimeStart(): number {
  if (--left !== 0) return -1;
  left = OWN_TIME_EVERY;
  return performance.now();
}

/** Ends a call ownTimeStart picked (t0 >= 0): it stands for OWN_TIME_EVERY such calls. */
export function ownTimeEnd(t0: number): void {
  if (t0 < 0) return;
  const ms = performance.now() - t0;
  ownTime.ms += (ms < OWN_TIME_CLIP_MS ? ms : OWN_TIME_CLIP_MS) * OWN_TIME_EVERY;
}

// Taken when the agent loads: an app that later replaces process.cpuUsage (or a library that
// breaks it) must not make the agent's timers throw into the app.
const threadCpuUsage = (process as unknown as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
const cpuUsage: () => NodeJS.CpuUsage = typeof threadCpuUsage === 'function' ? threadCpuUsage : process.cpuUsage;

/** CPU time so far, ms: this thread's where node reads it, else the process's; NaN when it cannot be read. */
function cpuNowMs(): number {
  try {
    const c = cpuUsage.call(process);
    return (c.user + c.system) / 1000;
  } catch {
    return NaN;
  }
}
