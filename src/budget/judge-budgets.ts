// Judges budgets on a finished run: limits on its load results, findings by severity, and,
// with a baseline, the regression of throughput and latency (p50, p99). A regression fails only
// when the comparison calls it real at the budget's margin: its 95% interval lies wholly beyond
// the allowed loss, so the noise of a shared CI machine does not fail a build by itself.

import type { Report } from '../report/report-schema.js';
import type { Comparison, MetricChange } from '../report/compare-schema.js';
import type { LoadResult } from '../load/load-result.js';
import type { Budget, BudgetMetric, BudgetResult } from './budget.js';

export const cmp = (a: number, op: string, b: number) => (op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b);
export const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;

/** The figure a limit budget is judged on, from a run's load results. */
export function limitValue(metric: BudgetMetric, load: LoadResult): number {
  if (metric === 'rps') return load.requests.perSecond;
  if (metric === 'errors') return load.errors.total;
  if (metric === 'errorRate') return load.errors.total / Math.max(1, load.requests.total + load.errors.total);
  return load.latency[metric];
}

/** A limit figure in words: `p99 38.20 ms`, `2410.3 req/s`, `3 errors`, `0.50% errors`. */
export function showLimit(metric: BudgetMetric, value: number): string {
  return metric === 'rps'
    ? `${value.toFixed(1)} req/s`
    : metric === 'errors'
      ? `${value} errors`
      : metric === 'errorRate'
        ? `${(value * 100).toFixed(2)}% errors`
        : `${metric} ${value.toFixed(2)} ms`;
}

function limit(b: Extract<Budget, { kind: 'limit' }>, report: Report): BudgetResult {
  const load = report.load;
  if (!load) return { budget: b.text, passed: false, actual: 'no load results' };
  const value = limitValue(b.metric, load);
  return { budget: b.text, passed: cmp(value, b.op, b.value), actual: showLimit(b.metric, value) };
}

function noFindings(b: Extract<Budget, { kind: 'no-findings' }>, report: Report): BudgetResult {
  const bad = report.findings.filter((f) => f.severity === 'critical' || (b.severity === 'warning' && f.severity === 'warning'));
  return {
    budget: b.text,
    passed: bad.length === 0,
    actual: bad.length === 0 ? `no ${b.severity} finding` : bad.map((f) => f.code).join(', '),
  };
}

function regressionOf(m: MetricChange, maxShare: number): boolean {
  if (m.verdict === 'worse') return true;
  if (m.verdict !== 'not enough data' || m.change === undefined) return false;
  return m.name === 'throughput' ? m.change < -maxShare : m.change > maxShare;
}

function regression(b: Extract<Budget, { kind: 'regression' }>, comparison: Comparison | Error | undefined): BudgetResult[] {
  if (!comparison) return [{ budget: b.text, passed: false, actual: 'no baseline to compare with (--baseline)' }];
  if (comparison instanceof Error) return [{ budget: b.text, passed: false, actual: `not compared: ${comparison.message}` }];
  return comparison.load
    .filter((m) => ['throughput', 'latency p50', 'latency p99'].includes(m.name))
    .map((m) => ({
      budget: `${m.name} ${b.text}`,
      passed: !regressionOf(m, b.maxShare),
      actual: `${m.change === undefined ? 'n/a' : pct(m.change)}${m.interval ? ` (95% interval ${pct(m.interval.low)} … ${pct(m.interval.high)})` : ''} vs baseline`,
    }));
}

export function judgeBudgets(budgets: readonly Budget[], report: Report, comparison?: Comparison | Error): BudgetResult[] {
  return budgets.flatMap((b) =>
    b.kind === 'limit' ? [limit(b, report)] : b.kind === 'no-findings' ? [noFindings(b, report)] : regression(b, comparison),
  );
}

/** The verdict lines, one per budget, printed last. */
export function formatBudgetLines(results: readonly BudgetResult[]): string {
  const failed = results.filter((r) => !r.passed).length;
  const lines = results.map((r) => `budget ${r.passed ? 'pass' : 'FAIL'}  ${r.budget}: ${r.actual}`);
  lines.push(failed === 0 ? `budgets: all ${results.length} passed` : `budgets: ${failed} of ${results.length} failed (exit 4)`);
  return lines.join('\n') + '\n';
}
