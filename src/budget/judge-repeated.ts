// Judges budgets on the distribution of repeated runs (`hotpath run --repeat N`): a limit on
// the median of the runs' figures (with its bootstrap 95% interval stated), findings by the
// share of runs that show them, and the regression against a baseline on the change of the
// medians, which fails only when its whole 95% interval lies beyond the allowed loss.

import type { LoadResult } from '../load/load-result.js';
import type { Report } from '../report/report-schema.js';
import { fullSeconds } from '../compare/compare-load.js';
import { medianChange, medianInterval } from '../compare/median-interval.js';
import type { Budget, BudgetResult } from './budget.js';
import { cmp, limitValue, pct, showLimit } from './judge-budgets.js';

/** What the new runs are compared with. */
export type RepeatBaseline =
  /** The baseline re-run between the new runs: its load results, one per run. */
  | { kind: 'reruns'; loads: LoadResult[] }
  /** The baseline run directory as recorded (not re-run): one run, its seconds give its spread. */
  | { kind: 'recorded'; load: LoadResult }
  | { kind: 'error'; error: Error };

const loadsOf = (reports: readonly Report[]) => reports.flatMap((r) => (r.load && r.load.requests.total > 0 ? [r.load] : []));

function interval(low: number | undefined, high: number | undefined, show: (x: number) => string): string {
  return low === undefined || high === undefined ? '' : ` (95% interval ${show(low)} … ${show(high)})`;
}

function limit(b: Extract<Budget, { kind: 'limit' }>, reports: readonly Report[]): BudgetResult {
  const loads = loadsOf(reports);
  if (loads.length * 2 <= reports.length) {
    return { budget: b.text, passed: false, actual: `${reports.length - loads.length} of ${reports.length} runs have no load results` };
  }
  const mi = medianInterval(loads.map((l) => limitValue(b.metric, l)));
  const unitless = (x: number) => showLimit(b.metric, x).replace(/^[a-z0-9_]+ (?=\d)/, '');
  return {
    budget: b.text,
    passed: cmp(mi.median, b.op, b.value),
    actual: `median ${showLimit(b.metric, mi.median)} over ${loads.length} runs${interval(mi.low, mi.high, unitless)}`,
  };
}

function noFindings(b: Extract<Budget, { kind: 'no-findings' }>, reports: readonly Report[]): BudgetResult {
  const counts = new Map<string, number>();
  for (const r of reports) {
    const codes = new Set(
      r.findings.filter((f) => f.severity === 'critical' || (b.severity === 'warning' && f.severity === 'warning')).map((f) => f.code),
    );
    for (const c of codes) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  const most = [...counts.values()].reduce((a, c) => Math.max(a, c), 0);
  const n = reports.length;
  const listed = [...counts].map(([c, k]) => `${c} in ${k} of ${n} runs`).join(', ');
  return {
    budget: b.text,
    // A finding counts when most runs show it: one noisy run neither hides nor invents one.
    passed: most * 2 <= n,
    actual: counts.size === 0 ? `no ${b.severity} finding in any of ${n} runs` : listed,
  };
}

const TESTED = [
  {
    name: 'throughput',
    pick: (l: LoadResult) => l.requests.perSecond,
    second: (p: { requests: number }) => p.requests,
    higherIsBetter: true,
  },
  { name: 'latency p50', pick: (l: LoadResult) => l.latency.p50, second: (p: { p50: number }) => p.p50, higherIsBetter: false },
  { name: 'latency p99', pick: (l: LoadResult) => l.latency.p99, second: (p: { p99: number }) => p.p99, higherIsBetter: false },
] as const;

function regression(
  b: Extract<Budget, { kind: 'regression' }>,
  reports: readonly Report[],
  base: RepeatBaseline | undefined,
): BudgetResult[] {
  if (!base) return [{ budget: b.text, passed: false, actual: 'no baseline to compare with (--baseline)' }];
  if (base.kind === 'error') return [{ budget: b.text, passed: false, actual: `not compared: ${base.error.message}` }];
  const loads = loadsOf(reports);
  const before = base.kind === 'reruns' ? base.loads : [base.load];
  const against = base.kind === 'reruns' ? `${before.length} baseline runs (re-run in turn)` : 'the recorded baseline run';
  return TESTED.map((m) => {
    const seconds =
      base.kind === 'recorded'
        ? fullSeconds(base.load)
            .filter((p) => m.name === 'throughput' || p.requests > 0)
            .map((p) => m.second(p))
        : [];
    const c = medianChange(before.map(m.pick), loads.map(m.pick), seconds);
    const worse =
      c.low !== undefined && c.high !== undefined
        ? m.higherIsBetter
          ? c.high < -b.maxShare
          : c.low > b.maxShare
        : c.change !== undefined && (m.higherIsBetter ? c.change < -b.maxShare : c.change > b.maxShare);
    return {
      budget: `${m.name} ${b.text}`,
      passed: loads.length > 0 && !worse,
      actual:
        loads.length === 0
          ? 'no run has load results'
          : `${c.change === undefined ? 'n/a' : pct(c.change)}${interval(c.low, c.high, pct)}, median of ${loads.length} runs vs ${against}`,
    };
  });
}

export function judgeRepeated(budgets: readonly Budget[], reports: readonly Report[], baseline?: RepeatBaseline): BudgetResult[] {
  return budgets.flatMap((b) =>
    b.kind === 'limit' ? [limit(b, reports)] : b.kind === 'no-findings' ? [noFindings(b, reports)] : regression(b, reports, baseline),
  );
}
