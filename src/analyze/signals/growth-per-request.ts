// Memory kept per request served, from three readings taken after full GCs: near the start of
// the load, in its middle (a full GC of V8's own, or the one the agent forces there:
// agent/profiling/mid-load-gc.ts) and after it (the post-load GC, no request in flight). A leak
// keeps bytes in proportion to the requests, so its rate holds in the second half; a server that
// warms up (JIT code, lazily-filled caches, a pool that grows) rises early and flattens. The
// second half is judged on its own (the trend after warm-up) and against the first. Readings
// under load include the requests in flight, which only lowers the second half's rate: a
// busy server cannot make a leak out of them. Pure: the readings are given.

import type { RequestSeries } from './request-series.js';
import { requestsAt } from './request-series.js';
import type { Window } from './load-window.js';

export interface Reading {
  t: number;
  bytes: number;
}

/** A reading with the requests finished by its time (from the window's start). */
export interface CountedReading extends Reading {
  requests: number;
}

export interface GrowthPerRequest {
  start?: CountedReading;
  mid: CountedReading;
  end: CountedReading;
  /** Bytes kept per request from the middle to the end (the trend after warm-up). */
  lateBytesPerRequest: number;
  /** From the start to the middle, when a start reading exists. */
  earlyBytesPerRequest?: number;
  /** Bytes kept from the middle to the end, and the requests served meanwhile. */
  lateGrowth: number;
  lateRequests: number;
}

/** The middle of the window is this span of it: readings from 30 % to 70 % of its time. */
export const MID_FROM = 0.3;
export const MID_TO = 0.7;

/** The lowest reading in the middle of the window (readings under load only err high), if any. */
export function midReading(readings: readonly Reading[], w: Window): Reading | undefined {
  const from = w.start + MID_FROM * w.durationMs;
  const to = w.start + MID_TO * w.durationMs;
  let best: Reading | undefined;
  for (const r of readings) if (r.t >= from && r.t <= to && (best === undefined || r.bytes < best.bytes)) best = r;
  return best;
}

/**
 * How far the readings in the middle of the window (MID_FROM to MID_TO) differ from one another,
 * bytes: readings under load hold the requests in flight, so their swing is the run's own noise
 * floor (a server answering 100 KB bodies swung 0.6 MB between two full GCs 0.2 s apart). 0 with
 * fewer than two readings there.
 */
export function midSwing(readings: readonly Reading[], w: Window): number {
  const from = w.start + MID_FROM * w.durationMs;
  const to = w.start + MID_TO * w.durationMs;
  const mids = readings.filter((r) => r.t >= from && r.t <= to).map((r) => r.bytes);
  return mids.length < 2 ? 0 : Math.max(...mids) - Math.min(...mids);
}

/**
 * The rates between `start` (optional), `mid` and `end` (the reading after the load: every
 * request of the window counted). Undefined when the middle saw no request, or none followed it.
 */
export function growthPerRequest(
  series: RequestSeries,
  w: Window,
  start: Reading | undefined,
  mid: Reading,
  end: Reading,
): GrowthPerRequest | undefined {
  const base = requestsAt(series, w.start);
  const at = (r: Reading, t = r.t): CountedReading => ({ ...r, requests: requestsAt(series, t) - base });
  const m = at(mid);
  const e = at(end, Math.max(end.t, w.end));
  const lateRequests = e.requests - m.requests;
  if (m.requests <= 0 || lateRequests <= 0) return undefined;
  const s = start !== undefined ? at(start, Math.min(start.t, mid.t)) : undefined;
  const earlyRequests = s !== undefined ? m.requests - s.requests : 0;
  return {
    ...(s !== undefined ? { start: s } : {}),
    mid: m,
    end: e,
    lateGrowth: e.bytes - m.bytes,
    lateRequests,
    lateBytesPerRequest: (e.bytes - m.bytes) / lateRequests,
    ...(s !== undefined && earlyRequests > 0 ? { earlyBytesPerRequest: (m.bytes - s.bytes) / earlyRequests } : {}),
  };
}

/**
 * The rates with what requests abandoned in the second half may still hold left out: a request
 * the client gave up on (the load's end closes the connections of the requests in flight) can
 * still wait in the app (queued for a lock, a pool, an upstream) at the post-load GC, with its
 * request, response, socket, the abort's error and stack. `bytesEach` per abandoned request.
 */
export function withoutAbandoned(g: GrowthPerRequest, abandoned: number, bytesEach: number): GrowthPerRequest {
  if (abandoned <= 0) return g;
  const lateGrowth = g.lateGrowth - abandoned * bytesEach;
  return { ...g, lateGrowth, lateBytesPerRequest: lateGrowth / g.lateRequests };
}
