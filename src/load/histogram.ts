// Latency histograms: HdrHistogram in microseconds, 1 µs to 1 h, 3 significant digits.
// Workers record into their own and ship them compressed; the main thread adds them up,
// which is lossless (same bucket layout everywhere).

import * as hdr from 'hdr-histogram-js';
import type { Histogram } from 'hdr-histogram-js';
import type { LatencyStats } from './load-result.js';

export type { Histogram };

/** 1 hour in µs: the highest latency kept; longer values are clamped to it. */
export const MAX_TRACKABLE_US = 3_600_000_000;

export function createHistogram(): Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: MAX_TRACKABLE_US,
    numberOfSignificantValueDigits: 3,
    autoResize: false,
  });
}

export function encodeHistogram(h: Histogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

/** Adds a histogram shipped by a worker into `into`. */
export function addEncoded(into: Histogram, encoded: string): Histogram {
  const h = hdr.decodeFromCompressedBase64(encoded);
  into.add(h);
  return h;
}

/** µs to ms, rounded to µs precision (3 decimals). */
export function usToMs(us: number): number {
  return Math.round(us) / 1000;
}

export function latencyStats(h: Histogram): LatencyStats {
  const count = h.totalCount;
  const at = (p: number) => (count === 0 ? 0 : usToMs(h.getValueAtPercentile(p)));
  return {
    count,
    min: count === 0 ? 0 : usToMs(h.minNonZeroValue),
    mean: count === 0 ? 0 : usToMs(h.mean),
    stdev: count === 0 ? 0 : usToMs(h.stdDeviation),
    p50: at(50),
    p75: at(75),
    p90: at(90),
    p97_5: at(97.5),
    p99: at(99),
    p999: at(99.9),
    p9999: at(99.99),
    max: count === 0 ? 0 : usToMs(h.maxValue),
  };
}
