// The relative change of a mean between two samples (after / before - 1) with a bootstrap
// percentile confidence interval: both samples are resampled with replacement, seeded, and
// the interval is read from the distribution of the resampled ratios.
//
// The samples are a run's per-second values, and seconds of one run are not independent: a
// busy neighbour on a shared machine stays busy for many seconds and moves the whole run. A
// run's level is therefore known no better than the spread of its seconds, not that spread
// over the square root of their count: each resample draws `draws` values (default 1, the
// conservative bound of an effective sample size of one), not as many as the run holds.

import { seededRandom } from './seeded-random.js';

export interface ChangeInterval {
  /** after mean / before mean - 1; undefined when the before mean is 0. */
  change?: number;
  /** 95% interval of the change; absent when either sample has fewer than 2 values. */
  low?: number;
  high?: number;
}

export const BOOTSTRAP_RESAMPLES = 2000;
export const BOOTSTRAP_SEED = 20;

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Values drawn per run and resample: the runs' effective sample size (see above). */
export const EFFECTIVE_DRAWS = 1;

function resampledMean(xs: readonly number[], rnd: () => number, draws: number): number {
  let sum = 0;
  for (let i = 0; i < draws; i++) sum += xs[Math.floor(rnd() * xs.length)];
  return sum / draws;
}

function quantile(sorted: readonly number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function bootstrapChange(
  before: readonly number[],
  after: readonly number[],
  seed = BOOTSTRAP_SEED,
  draws = EFFECTIVE_DRAWS,
): ChangeInterval {
  if (before.length === 0 || after.length === 0) return {};
  const b = mean(before);
  if (!(b > 0)) return {};
  const change = mean(after) / b - 1;
  if (before.length < 2 || after.length < 2) return { change };
  const rnd = seededRandom(seed);
  const ratios: number[] = [];
  for (let i = 0; i < BOOTSTRAP_RESAMPLES; i++) {
    const rb = resampledMean(before, rnd, Math.min(draws, before.length));
    if (rb > 0) ratios.push(resampledMean(after, rnd, Math.min(draws, after.length)) / rb - 1);
  }
  if (ratios.length === 0) return { change };
  ratios.sort((x, y) => x - y);
  return { change, low: quantile(ratios, 0.025), high: quantile(ratios, 0.975) };
}
