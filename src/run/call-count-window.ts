// When the agents count calls per function (agent/profiling/call-counts.ts): a short window near
// the end of a load of known duration, ending a little before it so the counts are read while
// requests still run. Short because V8 runs the code without inlining and counts every call
// meanwhile (a helper-heavy loop ran 4.4 times slower in the window); late so the code has been
// optimized and the caches warmed by then, like the rest of the measured load.

/** The window's length: at most this share of the load, and at most CALL_COUNT_MAX_MS. */
export const CALL_COUNT_SHARE = 0.12;
export const CALL_COUNT_MAX_MS = 600;
/** The window ends this share of the load (at most CALL_COUNT_END_GAP_MAX_MS) before the load does. */
export const CALL_COUNT_END_GAP = 0.05;
export const CALL_COUNT_END_GAP_MAX_MS = 250;

/** Epoch ms of the window for a load starting at `loadStart` and lasting `durationMs`. */
export function callCountWindow(loadStart: number, durationMs: number): { from: number; until: number } | undefined {
  if (!(durationMs > 0)) return undefined;
  const length = Math.min(CALL_COUNT_MAX_MS, durationMs * CALL_COUNT_SHARE);
  const gap = Math.min(CALL_COUNT_END_GAP_MAX_MS, durationMs * CALL_COUNT_END_GAP);
  const until = loadStart + durationMs - gap;
  return { from: until - length, until };
}
