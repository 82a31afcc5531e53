// How many of a call site's waits were in flight over time: the time spent at 0, 1, 2... calls in
// flight (the last level: that many or more), kept per site by the outgoing-calls and socket-waits
// hooks and reported as `concurrencyMs` (the analysis tells serialised waits from concurrent ones).

/** Levels counted one by one; more calls in flight than this count as this many. */
export const CONCURRENCY_LEVELS = 16;

export interface ConcurrencyLevels {
  /** Calls in flight now, ms spent at each level, and when the level last changed (0: never). */
  inFlight: number;
  levelMs: number[];
  changedAt: number;
}

export const newLevels = (): ConcurrencyLevels => ({
  inFlight: 0,
  levelMs: new Array<number>(CONCURRENCY_LEVELS + 1).fill(0),
  changedAt: 0,
});

/** Moves a site's count of calls in flight by `delta` at `now`, charging the time since the last change to the old level. */
export function inFlight(d: ConcurrencyLevels, delta: number, now: number): void {
  if (d.changedAt > 0) d.levelMs[Math.min(d.inFlight, CONCURRENCY_LEVELS)] += now - d.changedAt;
  d.changedAt = now;
  d.inFlight = Math.max(0, d.inFlight + delta);
}

/** The time at each level up to the highest reached, ms to 0.1; undefined when no time was charged. */
export function concurrencyMs(d: ConcurrencyLevels): number[] | undefined {
  const last = d.levelMs.findLastIndex((x) => x > 0);
  return last >= 0 ? d.levelMs.slice(0, last + 1).map((x) => Math.round(x * 10) / 10) : undefined;
}
