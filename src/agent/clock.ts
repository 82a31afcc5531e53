// The agent's clock: epoch ms with sub-ms precision for envelopes.
import { performance } from 'node:perf_hooks';

/** Epoch ms, fractional (performance.timeOrigin + performance.now()). */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}
