// Evidence values as JSON can carry them. JSON has no Infinity or NaN (JSON.stringify writes
// null for both), yet a ratio over a zero baseline is honestly infinite: "Infinity" and
// "-Infinity" are kept as strings (the report renders them as ∞), NaN becomes null. Applied
// once to every finding in analyzeRun, so report.json, --json and the HTML report agree.

/** A copy of `value` with non-finite numbers made JSON-safe, at any depth. */
export function jsonSafe(value: unknown): unknown {
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return value;
    return Number.isNaN(value) ? null : value > 0 ? 'Infinity' : '-Infinity';
  }
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = jsonSafe(v);
    return out;
  }
  return value;
}

/** Another finding about the same culprit, folded into the kept one's `evidence.alsoFound`. */
export interface AlsoFound {
  code: string;
  category: string;
  title: string;
  evidence: Record<string, unknown>;
}

export function isAlsoFoundList(v: unknown): v is AlsoFound[] {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every(
      (x) =>
        typeof x === 'object' && x !== null && typeof (x as AlsoFound).category === 'string' && typeof (x as AlsoFound).title === 'string',
    )
  );
}

/** `category: title; category: title`, for one-line renderings. */
export function alsoFoundText(list: readonly AlsoFound[]): string {
  return list.map((f) => `${f.category}: ${f.title}`).join('; ');
}

/** "Infinity" / "-Infinity" as written by jsonSafe, shown as ∞; any other text unchanged. */
export function showInfinity(text: string): string {
  return text === 'Infinity' ? '∞' : text === '-Infinity' ? '-∞' : text;
}
