// The request count as a function of time, so growth (listeners, routes, timers, heap) can
// be correlated with the requests served rather than with the clock.

import type { ThreadTelemetry } from '../../run-dir/run-data.js';

export interface RequestSeries {
  /** Sample end times, epoch ms. */
  t: number[];
  /** Requests finished up to and including each sample (cumulative, from the thread's first sample). */
  cumulative: number[];
}

export function requestSeries(thread: ThreadTelemetry): RequestSeries {
  const t: number[] = [];
  const cumulative: number[] = [];
  let n = 0;
  for (const s of thread.samples) {
    n += s.http?.finished ?? 0;
    t.push(s.t);
    cumulative.push(n);
  }
  return { t, cumulative };
}

/** Cumulative requests at time `time` (the last sample at or before it). */
export function requestsAt(series: RequestSeries, time: number): number {
  let lo = 0;
  let hi = series.t.length - 1;
  let ans = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (series.t[mid] <= time) {
      ans = series.cumulative[mid];
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return ans;
}
