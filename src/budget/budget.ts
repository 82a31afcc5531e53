// A performance budget of `hotpath run` (docs/run.md, Budgets): a limit on one figure of the
// run (`--assert 'p99<50ms'`, `'rps>2000'`, `'no critical'`) or on its regression against a
// baseline run (`--max-regression 5%`). Each is judged pass or fail; a failed one exits 4.

export type BudgetMetric = 'p50' | 'p75' | 'p90' | 'p97_5' | 'p99' | 'p999' | 'max' | 'rps' | 'errors' | 'errorRate';

export type Budget =
  | { kind: 'limit'; text: string; metric: BudgetMetric; op: '<' | '<=' | '>' | '>='; value: number }
  | { kind: 'no-findings'; text: string; severity: 'critical' | 'warning' }
  | { kind: 'regression'; text: string; maxShare: number };

// What a budget's judgement looks like in report.json: declared with the report's schema.
export type { BudgetResult, BudgetVerdict, RepeatRecord } from '../report/budget-verdict.js';
