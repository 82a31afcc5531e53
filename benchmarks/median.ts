// The median every benchmark reports (upper middle for an even count), so suites agree on it.
export function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}
