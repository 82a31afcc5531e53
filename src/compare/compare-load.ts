// Throughput and latency percentiles of two load results side by side. Throughput, p50 and p99
// are tested over the per-second timeline (docs/load-result.md, TimelinePoint); the other
// percentiles come from the whole-window HdrHistogram and are shown without a verdict. When the
// machine gave the two runs' saturated event loops different shares of a CPU (loop-cpu-share.ts),
// the tested figures are judged at equal share: a saturated loop serves in proportion to the time
// it runs, so the after run's seconds are scaled to the before run's share (its requests divided
// by the ratio of the shares, its latencies multiplied by it) before the interval is drawn.

import type { LoadResult, TimelinePoint } from '../load/load-result.js';
import { bootstrapChange } from './bootstrap-change.js';
import type { MetricChange } from '../report/compare-schema.js';
import { measuredChange, plainChange } from './metric-verdict.js';

/** The seconds that ran whole: the last point of a window is usually a few ms long. */
export function fullSeconds(load: LoadResult): TimelinePoint[] {
  const whole = Math.floor(load.durationMs / 1000 + 0.02);
  return (load.timeline ?? []).filter((p) => p.second <= whole);
}

const series = (load: LoadResult, pick: (p: TimelinePoint) => number, answered = false, scale = 1) =>
  fullSeconds(load)
    .filter((p) => !answered || p.requests > 0)
    .map((p) => pick(p) * scale);

/**
 * `shareRatio`: the after run's loop share of a CPU over the before run's (1: not measured, or
 * the same); the verdicts compare the runs as if the after run's loop had had the before's share.
 */
export function compareLoad(before: LoadResult, after: LoadResult, minEffect: number, shareRatio = 1): MetricChange[] {
  const tested = (
    name: string,
    unit: string,
    b: number,
    a: number,
    pick: (p: TimelinePoint) => number,
    higherIsBetter: boolean,
    answered = false,
  ) =>
    measuredChange(
      name,
      unit,
      b,
      a,
      bootstrapChange(series(before, pick, answered), series(after, pick, answered, higherIsBetter ? 1 / shareRatio : shareRatio)),
      minEffect,
      higherIsBetter,
    );
  return [
    tested('throughput', 'req/s', before.requests.perSecond, after.requests.perSecond, (p) => p.requests, true),
    tested('latency p50', 'ms', before.latency.p50, after.latency.p50, (p) => p.p50, false, true),
    plainChange('latency p90', 'ms', before.latency.p90, after.latency.p90),
    tested('latency p99', 'ms', before.latency.p99, after.latency.p99, (p) => p.p99, false, true),
    plainChange('latency p99.9', 'ms', before.latency.p999, after.latency.p999),
    plainChange('latency max', 'ms', before.latency.max, after.latency.max),
    plainChange('errors', 'count', before.errors.total, after.errors.total),
  ];
}
