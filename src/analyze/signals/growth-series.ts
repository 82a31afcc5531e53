// Growth of one hooked quantity (listeners on an emitter, routes, pending timers, sync-call
// totals) across the agent's cumulative growth reports, related to the requests served.

import type { GrowthMessage } from '../../agent/protocol.js';
import type { ThreadTelemetry } from '../../run-dir/run-data.js';
import type { Window } from './load-window.js';
import { requestSeries, requestsAt } from './request-series.js';
import { correlation, round } from './stats.js';

export interface GrowthStats {
  first: number;
  last: number;
  delta: number;
  /** Growth per request served over the same span. */
  perRequest: number;
  perSecond: number;
  /** Correlation of the value with the cumulative request count (1 = grows with every request). */
  requestCorrelation: number;
  /** Correlation with time (a periodic job grows with the clock, not the traffic). */
  timeCorrelation: number;
  points: number;
  spanMs: number;
}

/** Stats of `value(message)` over a thread's growth reports; undefined when never present. */
export function growthStats(thread: ThreadTelemetry, value: (m: GrowthMessage) => number | undefined): GrowthStats | undefined {
  return pointStats(
    thread,
    thread.growth.map((m) => ({ t: m.t, v: value(m) })).filter((p): p is { t: number; v: number } => p.v !== undefined),
  );
}

/** The same stats over any readings of the thread in time order (active resources per sample); undefined without any. */
export function pointStats(thread: ThreadTelemetry, pts: readonly { t: number; v: number }[]): GrowthStats | undefined {
  if (pts.length === 0) return undefined;
  const series = requestSeries(thread);
  const reqs = pts.map((p) => requestsAt(series, p.t));
  const first = pts[0];
  const last = pts[pts.length - 1];
  const spanMs = last.t - first.t;
  const dReq = reqs[reqs.length - 1] - reqs[0];
  const delta = last.v - first.v;
  return {
    first: first.v,
    last: last.v,
    delta,
    perRequest: dReq > 0 ? round(delta / dReq, 4) : 0,
    perSecond: spanMs > 0 ? round((delta * 1000) / spanMs, 3) : 0,
    requestCorrelation: round(
      correlation(
        reqs,
        pts.map((p) => p.v),
      ),
      3,
    ),
    timeCorrelation: round(
      correlation(
        pts.map((p) => p.t),
        pts.map((p) => p.v),
      ),
      3,
    ),
    points: pts.length,
    spanMs,
  };
}

/** The last growth report of a thread, or undefined. */
export function lastGrowth(thread: ThreadTelemetry): GrowthMessage | undefined {
  return thread.growth[thread.growth.length - 1];
}

/**
 * The growth reports that bound the load window, to turn cumulative totals into the window's
 * (`end` minus `before`): the last report before it starts, and the last one up to a second
 * after it ends (growth goes out once a second). Without a window: everything up to the last.
 */
export function windowGrowth(thread: ThreadTelemetry, w: Window | null): { before?: GrowthMessage; end: GrowthMessage } | undefined {
  const msgs = thread.growth;
  if (msgs.length === 0) return undefined;
  const before = w ? msgs.findLast((m) => m.t <= w.start) : undefined;
  const end = (w ? msgs.findLast((m) => m.t <= w.end + 1000) : undefined) ?? msgs[msgs.length - 1];
  return before ? { before, end } : { end };
}

/**
 * The share of a quantity's rise from its first point to its last that came after the midpoint in
 * time: a pool that filled up early, or timers that reached rate × delay and stay there, are flat
 * by then (near 0); a leak still climbs (near 0.5); a step late in the window is near 1. 0 when it
 * did not rise. Points in time order.
 */
export function lateShare(pts: readonly { t: number; v: number }[]): number {
  if (pts.length < 2) return 0;
  const first = pts[0];
  const last = pts[pts.length - 1];
  const rise = last.v - first.v;
  if (rise <= 0) return 0;
  const midT = (first.t + last.t) / 2;
  const mid = pts.find((p) => p.t >= midT) ?? last;
  return (last.v - mid.v) / rise;
}

/**
 * lateShare of a hooked quantity over the load window (reports up to a second after it ends
 * count, as growth goes out once a second), measured against the requests served, not the clock:
 * the share of the rise that came in the second half of the window's requests. A starved machine
 * serves requests unevenly (a re-arm loop per request read 24 % of its rise after the window's
 * midpoint in time, though it grew with every request, r 0.99, because the target got less CPU in
 * the second half). The value at the midpoint is read between the two reports around it (a report
 * comes once a second: the next one can be most of a second later). Against time when the reports
 * saw no request served.
 */
export function lateGrowthShare(thread: ThreadTelemetry, value: (m: GrowthMessage) => number | undefined, w: Window | null): number {
  const pts = thread.growth
    .filter((m) => !w || (m.t >= w.start && m.t <= w.end + 1000))
    .map((m) => ({ t: m.t, v: value(m) }))
    .filter((p): p is { t: number; v: number } => p.v !== undefined);
  return lateShareServed(thread, pts);
}

/**
 * lateShare of any readings of the thread (time order) against the requests served by their
 * times, read between the readings around the midpoint; against time when none was served.
 */
export function lateShareServed(thread: ThreadTelemetry, pts: readonly { t: number; v: number }[]): number {
  const series = requestSeries(thread);
  const reqs = pts.map((p) => requestsAt(series, p.t));
  const served = pts.length > 1 && reqs[reqs.length - 1] > reqs[0];
  return lateShareAt(pts.map((p, i) => ({ x: served ? reqs[i] : p.t, v: p.v })));
}

/**
 * lateShare along any increasing axis `x` (requests served), with the value at the midpoint
 * read on the line between the readings around it. 0 when the quantity did not rise.
 */
export function lateShareAt(pts: readonly { x: number; v: number }[]): number {
  if (pts.length < 2) return 0;
  const first = pts[0];
  const last = pts[pts.length - 1];
  const rise = last.v - first.v;
  if (rise <= 0 || last.x <= first.x) return 0;
  const midX = (first.x + last.x) / 2;
  const after = pts.findIndex((p) => p.x >= midX);
  const b = pts[after];
  const a = pts[after - 1] ?? b;
  const mid = b.x > a.x ? a.v + ((b.v - a.v) * (midX - a.x)) / (b.x - a.x) : b.v;
  return (last.v - mid) / rise;
}
