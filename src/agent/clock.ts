// The agent's clocks: epoch ms with sub-ms precision for envelopes, monotonic ms for durations.
import { performance } from 'node:perf_hooks';

/** Epoch ms, fractional (performance.timeOrigin + performance.now()). */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Monotonic ms since this thread's time origin. */
export function monoNow(): number {
  return performance.now();
}
