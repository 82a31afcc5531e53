// Small numeric helpers shared by the analyzers: means, percentiles and least-squares fits.

export function sum(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}

export function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : sum(xs) / xs.length;
}

/** Mean of `xs` weighted by `ws` (0 when the weights sum to 0). */
export function weightedMean(xs: readonly number[], ws: readonly number[]): number {
  let s = 0;
  let w = 0;
  for (let i = 0; i < xs.length; i++) {
    s += xs[i] * ws[i];
    w += ws[i];
  }
  return w === 0 ? 0 : s / w;
}

/** Percentile by linear interpolation, p in 0..100. 0 for an empty list. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

export function max(xs: readonly number[]): number {
  let m = 0;
  for (const x of xs) if (x > m) m = x;
  return m;
}

/**
 * The smallest and largest of `xs` (Infinity / -Infinity when empty), in a loop: Math.min(...xs)
 * passes every value as an argument and overflows the stack past ~125,000 of them (a long run).
 */
export function extent(xs: Iterable<number>): { min: number; max: number } {
  let min = Infinity,
    max = -Infinity;
  for (const x of xs) {
    if (x < min) min = x;
    if (x > max) max = x;
  }
  return { min, max };
}

export interface LinearFit {
  /** Change of y per unit of x. */
  slope: number;
  intercept: number;
  /** Coefficient of determination, 0..1 (0 when y is constant). */
  r2: number;
  n: number;
}

/** Ordinary least squares of y on x. */
export function linearFit(xs: readonly number[], ys: readonly number[]): LinearFit {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return { slope: 0, intercept: ys[0] ?? 0, r2: 0, n };
  const mx = mean(xs.slice(0, n));
  const my = mean(ys.slice(0, n));
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i] - mx;
    const dy = ys[i] - my;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  if (sxx === 0) return { slope: 0, intercept: my, r2: 0, n };
  const slope = sxy / sxx;
  const r2 = syy === 0 ? 0 : (sxy * sxy) / (sxx * syy);
  return { slope, intercept: my - slope * mx, r2, n };
}

/** Pearson correlation of two series (0 when either is constant). */
export function correlation(xs: readonly number[], ys: readonly number[]): number {
  const fit = linearFit(xs, ys);
  return Math.sign(fit.slope) * Math.sqrt(fit.r2);
}

/** Rounds to `digits` decimals, for evidence figures people read. */
export function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Percentile (0..100) of values each carrying a weight (e.g. per-interval p50s weighted by count). */
export function weightedPercentile(xs: readonly number[], ws: readonly number[], p: number): number {
  const idx = xs
    .map((_, i) => i)
    .filter((i) => ws[i] > 0)
    .sort((a, b) => xs[a] - xs[b]);
  const total = sum(idx.map((i) => ws[i]));
  if (total === 0) return 0;
  let acc = 0;
  for (const i of idx) {
    acc += ws[i];
    if (acc >= (p / 100) * total) return xs[i];
  }
  return xs[idx[idx.length - 1]];
}
