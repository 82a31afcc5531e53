// The agent's own time on the thread it runs in: what its callbacks take on the target's loop
// (the sampler, collectors and growth reports on their timers; the per-request subscribers and
// hooks), so a run can state what the agent cost the server it measured (docs/agent.md, Cost).
// Timer callbacks are timed every time (a few dozen a second); per-request paths only one call
// in OWN_TIME_EVERY, counted OWN_TIME_EVERY times: two clock reads per request would cost more
// than some of the paths they time. What node does for the agent outside its functions (building
// the channel messages, the call into a wrapper) and V8's profiling are not timed here.
import { performance } from 'node:perf_hooks';

/** One per-request call in this many is timed. */
export const OWN_TIME_EVERY = 64;

/** Milliseconds of this thread spent in the agent's callbacks so far (per-request paths estimated). */
export const ownTime = { ms: 0 };

let left = OWN_TIME_EVERY;

/** `fn`, with the time each call takes added to ownTime (for the agent's timer callbacks). */
export function timed(fn: () => void): () => void {
  return () => {
    const t0 = performance.now();
    try {
      fn();
    } finally {
      ownTime.ms += performance.now() - t0;
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
  if (t0 >= 0) ownTime.ms += (performance.now() - t0) * OWN_TIME_EVERY;
}
