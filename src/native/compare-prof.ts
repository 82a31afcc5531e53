// Reads the text `node --prof-process` prints back into rows, and compares its top JS
// functions with hotpath's: the check behind the `hotpath prof` tests and benchmark (same
// names, shares within a point). JS functions are the `JS:`/`Eval:` rows (code with a
// SharedFunctionInfo); builtins are left out, as --prof-process cannot name most of them.

import type { ProfStatistics } from './prof-statistics.js';

export interface TextRow {
  name: string;
  ticks: number;
  total: number;
}

/** The rows of one `[Section]:` of --prof-process's text (e.g. `JavaScript`, `Summary`). */
export function profProcessSection(text: string, section: string): TextRow[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === `[${section}]:`);
  if (start < 0) return [];
  const rows: TextRow[] = [];
  for (let i = start + 2; i < lines.length; i++) {
    const m = /^\s+(\d+)\s+([\d.]+)%\s+(?:[\d.]+%\s+)?(.*)$/.exec(lines[i]);
    if (!m) break;
    rows.push({ name: m[3], ticks: Number(m[1]), total: Number(m[2]) });
  }
  return rows;
}

/** `Statistical profiling result from …, (N ticks, U unaccounted, …)`. */
export function profProcessTotals(text: string): { ticks: number; unaccounted: number } | undefined {
  const m = /\((\d+) ticks, (\d+) unaccounted/.exec(text);
  return m ? { ticks: Number(m[1]), unaccounted: Number(m[2]) } : undefined;
}

const isJsFunction = (name: string) => /^(JS|Eval): /.test(name);

export interface TopComparison {
  /** --prof-process's top JS functions, each with hotpath's share beside it. */
  rows: { name: string; theirs: number; ours: number | undefined }[];
  /** Rows whose name hotpath lacks or whose share differs by more than `tolerance` points. */
  mismatches: string[];
}

export function compareTopJs(theirText: string, ours: ProfStatistics, n = 10, tolerance = 1): TopComparison {
  const theirs = profProcessSection(theirText, 'JavaScript')
    .filter((r) => isJsFunction(r.name))
    .slice(0, n);
  const mine = new Map(ours.javascript.map((r) => [r.name, r.total]));
  const rows = theirs.map((t) => ({ name: t.name, theirs: t.total, ours: mine.get(t.name) }));
  const mismatches = rows
    .filter((r) => r.ours === undefined || Math.abs(r.ours - r.theirs) > tolerance)
    .map(
      (r) => `${r.name}: --prof-process ${r.theirs.toFixed(1)} %, hotpath ${r.ours === undefined ? 'missing' : `${r.ours.toFixed(1)} %`}`,
    );
  return { rows, mismatches };
}
