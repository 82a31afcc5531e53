// Merging the workers' per-second reports: each second's histograms are added (lossless,
// same bucket layout everywhere) into one interval, then into running totals, and dropped,
// so memory stays flat however long the run.

import { addEncoded, createHistogram, latencyStats, type Histogram } from './histogram.js';
import type { TimelinePoint } from './load-result.js';
import { C_BYTES_READ, C_COMPLETED, C_PARSE, C_SOCKET_ERRORS, C_TIMEOUTS, COUNTERS, type IntervalData } from './worker-protocol.js';

/** One second of the measured window, merged across workers (histograms only lent to the hook). */
export interface IntervalPoint extends TimelinePoint {
  /** Seconds this interval covers (1, or less for the last one). */
  lengthS: number;
  latency: Histogram;
  service: Histogram | null;
}

/** Running totals: every second is merged into them once, then dropped (bounded memory on long runs). */
export class Totals {
  readonly latency = createHistogram();
  readonly service: Histogram | null;
  readonly counters = new Array<number>(COUNTERS).fill(0);
  readonly statuses: Record<string, number> = {};
  readonly errors: Record<string, number> = {};
  readonly timeline: TimelinePoint[] = [];
  maxLagMs = 0;

  constructor(open: boolean) {
    this.service = open ? createHistogram() : null;
  }

  add(data: IntervalData[], point: IntervalPoint): void {
    for (const d of data) {
      d.counters.forEach((v, j) => {
        this.counters[j] += v;
      });
      for (const [s, c] of d.statuses) this.statuses[s] = (this.statuses[s] ?? 0) + c;
      for (const [e, c] of Object.entries(d.errors)) this.errors[e] = (this.errors[e] ?? 0) + c;
      this.maxLagMs = Math.max(this.maxLagMs, d.maxLagMs);
    }
    this.latency.add(point.latency);
    if (this.service && point.service) this.service.add(point.service);
    const { second, requests, errors, bytesRead, p50, p99 } = point;
    if (requests === 0 && errors === 0 && point.lengthS < 0.1) return; // the sliver after the last full second
    this.timeline.push({ second, requests, errors, bytesRead, p50, p99 });
  }
}

/** Merges every worker's report of second k into one interval. */
export function mergeSlot(k: number, data: IntervalData[], lengthS: number): IntervalPoint {
  const latency = createHistogram();
  const service = data.some((d) => d.service !== undefined) ? createHistogram() : null;
  let requests = 0,
    errors = 0,
    bytesRead = 0;
  for (const d of data) {
    addEncoded(latency, d.latency);
    if (service && d.service) addEncoded(service, d.service);
    requests += d.counters[C_COMPLETED];
    errors += d.counters[C_SOCKET_ERRORS] + d.counters[C_TIMEOUTS] + d.counters[C_PARSE];
    bytesRead += d.counters[C_BYTES_READ];
  }
  const stats = latencyStats(latency);
  return { second: k + 1, lengthS, requests, errors, bytesRead, p50: stats.p50, p99: stats.p99, latency, service };
}
