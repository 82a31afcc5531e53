// How many of a call site's waits were in flight over time: the time spent at 0, 1, 2... calls in
// flight (the last level: that many or more), kept per site by the outgoing-calls, socket-waits and
// message-waits hooks and reported as `concurrencyMs` (the analysis tells serialised waits from
// concurrent ones), with the row those hooks report per site (waitRow).
import type { CallSite } from '../protocol.js';
import { withSite } from './site-counter.js';

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

/** A site's waits: the levels, and the waits answered and the time they took (ms). */
export interface WaitData extends ConcurrencyLevels {
  completed: number;
  totalMs: number;
}

/** Milliseconds to the microsecond, as the wait hooks report them. */
export const roundMs = (x: number): number => Math.round(x * 1000) / 1000;

/**
 * The row a wait hook reports for one site: what names its peer (`head`), then the waits
 * started (`count`), answered and their time, the hook's own `extra` fields, the concurrency
 * levels when any time was charged, and the site and stack.
 */
export function waitRow<H extends object, X extends object>(
  head: H,
  e: { count: number; data: WaitData; site?: CallSite; stack?: CallSite[] },
  extra?: X,
): H & X & { count: number; completed: number; totalMs: number; concurrencyMs?: number[]; site?: CallSite; stack?: CallSite[] } {
  const row: H & X & { count: number; completed: number; totalMs: number; concurrencyMs?: number[] } = {
    ...head,
    count: e.count,
    completed: e.data.completed,
    totalMs: roundMs(e.data.totalMs),
    ...(extra as X),
  };
  const levels = concurrencyMs(e.data);
  if (levels !== undefined) row.concurrencyMs = levels;
  return withSite(row, e);
}
