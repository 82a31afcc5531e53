// Summarises a histogram (perf_hooks' or a LogHistogram, in ns or µs) into the protocol's HistogramSummary in ms.
import type { HistogramSummary } from '../protocol.js';

/** What summarize() reads: a perf_hooks histogram, or a LogHistogram. */
export interface Histogram {
  readonly count: number;
  readonly min: number;
  readonly mean: number;
  readonly max: number;
  percentile(p: number): number;
}

export const EMPTY_SUMMARY: HistogramSummary = { count: 0, min: 0, mean: 0, max: 0, p50: 0, p90: 0, p99: 0 };

/**
 * `toMs` converts the histogram's unit to ms; `offsetMs` is subtracted and the result clamped at
 * zero (monitorEventLoopDelay records the timer resolution on top of the real delay).
 */
export function summarize(h: Histogram, toMs: number, offsetMs = 0): HistogramSummary {
  const count = h.count;
  if (count === 0) return { ...EMPTY_SUMMARY };
  const ms = (v: number): number => round3(Math.max(0, v * toMs - offsetMs));
  return {
    count,
    min: ms(h.min),
    mean: ms(h.mean),
    max: ms(h.max),
    p50: ms(h.percentile(50)),
    p90: ms(h.percentile(90)),
    p99: ms(h.percentile(99)),
  };
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
