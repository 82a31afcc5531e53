// Whether a change is real: its 95% interval lies wholly beyond the noise margin (minEffect),
// on the good side (better) or the bad side (worse). A shared, busy machine moves whole runs by
// several percent, which per-second values within one run cannot show; the margin absorbs it.

import type { ChangeInterval } from './bootstrap-change.js';
import type { MetricChange, Verdict } from '../report/compare-schema.js';

/** The default noise margin: changes whose interval reaches within ±10% are not called real. */
export const DEFAULT_MIN_EFFECT = 0.1;

export function verdictOf(c: ChangeInterval, minEffect: number, higherIsBetter: boolean): Verdict {
  if (c.low === undefined || c.high === undefined) return 'not enough data';
  const up = c.low > minEffect;
  const down = c.high < -minEffect;
  if (!up && !down) return 'no significant difference';
  return up === higherIsBetter ? 'better' : 'worse';
}

/** A MetricChange with its interval and verdict. */
export function measuredChange(
  name: string,
  unit: string,
  before: number,
  after: number,
  c: ChangeInterval,
  minEffect: number,
  higherIsBetter: boolean,
): MetricChange {
  return {
    name,
    unit,
    before,
    after,
    ...(before > 0 ? { change: after / before - 1 } : {}),
    ...(c.low !== undefined && c.high !== undefined ? { interval: { low: c.low, high: c.high } } : {}),
    verdict: verdictOf(c, minEffect, higherIsBetter),
  };
}

/** A MetricChange shown side by side only (no per-interval values to test it on). */
export function plainChange(name: string, unit: string, before: number, after: number): MetricChange {
  return { name, unit, before, after, ...(before > 0 ? { change: after / before - 1 } : {}) };
}
