// The median of a few whole-run values (one per repeated run) with a seeded bootstrap 95%
// interval, and the change between two such medians. Runs, unlike the seconds of one run, are
// independent draws of the machine's state (each run restarts the server and meets the
// neighbours anew), so resampling them whole is sound; with few runs the interval is wide, and
// says so.

import { seededRandom } from './seeded-random.js';
import { BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED } from './bootstrap-change.js';

export interface MedianInterval {
  median: number;
  /** 95% interval of the median; absent with fewer than 2 values. */
  low?: number;
  high?: number;
  n: number;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function quantile(sorted: readonly number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

function resampledMedian(xs: readonly number[], rnd: () => number): number {
  const draw = new Array<number>(xs.length);
  for (let i = 0; i < xs.length; i++) draw[i] = xs[Math.floor(rnd() * xs.length)];
  return median(draw);
}

export function medianInterval(xs: readonly number[], seed = BOOTSTRAP_SEED): MedianInterval {
  const m = median(xs);
  if (xs.length < 2) return { median: m, n: xs.length };
  const rnd = seededRandom(seed);
  const meds: number[] = [];
  for (let i = 0; i < BOOTSTRAP_RESAMPLES; i++) meds.push(resampledMedian(xs, rnd));
  meds.sort((a, b) => a - b);
  return { median: m, low: quantile(meds, 0.025), high: quantile(meds, 0.975), n: xs.length };
}

/**
 * after median / before median - 1 with its 95% interval. Each side is a list of whole-run
 * values, resampled whole; a side of one run (a baseline recorded elsewhere) is resampled over
 * `beforeSeconds` instead, one second per draw, as hotpath compare does (a run's level is known
 * no better than the spread of its seconds); the seconds are scaled so that their median is the
 * run's own figure (a whole-window p99 is not the median of per-second p99s).
 */
export function medianChange(
  before: readonly number[],
  after: readonly number[],
  beforeSeconds: readonly number[] = [],
  seed = BOOTSTRAP_SEED,
): { change?: number; low?: number; high?: number } {
  const b = median(before);
  if (!(b > 0) || after.length === 0) return {};
  const change = median(after) / b - 1;
  const fromSeconds = before.length < 2 && beforeSeconds.length >= 2;
  if (after.length < 2 || (before.length < 2 && !fromSeconds)) return { change };
  const scale = fromSeconds ? b / (median(beforeSeconds) || b) : 1;
  const rnd = seededRandom(seed);
  const ratios: number[] = [];
  for (let i = 0; i < BOOTSTRAP_RESAMPLES; i++) {
    const rb = fromSeconds ? beforeSeconds[Math.floor(rnd() * beforeSeconds.length)] * scale : resampledMedian(before, rnd);
    if (rb > 0) ratios.push(resampledMedian(after, rnd) / rb - 1);
  }
  if (ratios.length === 0) return { change };
  ratios.sort((x, y) => x - y);
  return { change, low: quantile(ratios, 0.025), high: quantile(ratios, 0.975) };
}
