// Waits that only some requests make: most requests answer at once (a typical p50 of a
// millisecond), while a route hit by one request in a few awaits a call several times in turn
// (probe round x: a koa route of 1 request in 5 tracking 6 parcels one after another, 4 ms each,
// 8.3 ms under load; p50 0.05 ms, p99 62 ms, the calls 100 % of the time requests were in flight).
// The latency p50 says nothing then; the call site's own counts and the slowest requests do.

/**
 * The median request made none of the waits when it took well under one of them: at most this
 * share of the requests made them, so each of those made at least perRequest / this many.
 */
export const MINORITY_MAX_WAITING_SHARE = 0.5;
/**
 * "Well under": the median request took at most this share of one wait's mean. A mean wait is
 * dragged up by its tail, so a route making one call per request has a median under the calls'
 * mean (re-analysed probes, one call per request to a local service on a busy machine: a median
 * request of 4.5 ms against fetch calls of 6.9 ms, 6.2 ms against commands of 7.1 ms: 0.65 and 0.87);
 * the minority route of round x read 0.05 ms against 8.3 ms.
 */
export const MINORITY_MAX_P50_OF_WAIT = 0.25;
/**
 * The slowest requests (p99) took at least this many waits' time end to end: waits started
 * together take about one of them (the longest), waits in turn their sum.
 */
export const MINORITY_MIN_WAITS_IN_P99 = 2;

export interface MinorityWaits {
  /** The fewest waits each request that made any must have made (they are at most half the requests). */
  perWaitingRequest: number;
  /** What those waits add up to in one such request, ms. */
  waitingRequestMs: number;
}

export interface MinorityWaitRules {
  /** Waits per waiting request that make a sequence (io-wait's IO_WAIT_SEQUENTIAL_MIN_PER_REQUEST). */
  minPerRequest: number;
  /** The lower bound of a sequence's sum against the latency (IO_WAIT_SEQUENTIAL_MIN_SUM). */
  minSum: number;
  /** A request time worth a finding, ms (IO_WAIT_MIN_LATENCY_MS). */
  minLatencyMs: number;
  /** The share of the requests' time the waits must explain (IO_WAIT_CULPRIT_MIN_SHARE). */
  minShare: number;
}

/**
 * Whether one wait site's waits (`perRequest` over all requests, `eachMs` each, `share` of the
 * time requests were in flight) are made, one after another, by a minority of slow requests:
 * they explain most of the requests' time, the median request took well under one of them, each
 * waiting request made several (perWaitingRequest ≥ rules.minPerRequest) adding up to a request
 * time worth a finding, and the slowest requests (p99) took about that long or more and at least
 * MINORITY_MIN_WAITS_IN_P99 waits' time, as waits in turn do (waits started together would take
 * about one of them).
 */
export function minorityWaits(
  latency: { p50Ms: number; p99Ms: number },
  waits: { perRequest: number; eachMs: number; share: number },
  rules: MinorityWaitRules,
): MinorityWaits | undefined {
  if (waits.share < rules.minShare || !(waits.eachMs > 0) || latency.p50Ms > MINORITY_MAX_P50_OF_WAIT * waits.eachMs) return undefined;
  const perWaitingRequest = waits.perRequest / MINORITY_MAX_WAITING_SHARE;
  const waitingRequestMs = perWaitingRequest * waits.eachMs;
  if (perWaitingRequest < rules.minPerRequest) return undefined;
  if (waitingRequestMs < rules.minSum * rules.minLatencyMs) return undefined;
  if (latency.p99Ms < Math.max(rules.minSum * waitingRequestMs, MINORITY_MIN_WAITS_IN_P99 * waits.eachMs)) return undefined;
  return { perWaitingRequest, waitingRequestMs };
}
