// A performance budget of `hotpath run` (docs/run.md, Budgets): a limit on one figure of the
// run (`--assert 'p99<50ms'`, `'rps>2000'`, `'no critical'`) or on its regression against a
// baseline run (`--max-regression 5%`). Each is judged pass or fail; a failed one exits 4.

export type BudgetMetric = 'p50' | 'p75' | 'p90' | 'p97_5' | 'p99' | 'p999' | 'max' | 'rps' | 'errors' | 'errorRate';

export type Budget =
  | { kind: 'limit'; text: string; metric: BudgetMetric; op: '<' | '<=' | '>' | '>='; value: number }
  | { kind: 'no-findings'; text: string; severity: 'critical' | 'warning' }
  | { kind: 'regression'; text: string; maxShare: number };

export interface BudgetResult {
  /** The budget as written, e.g. `p99<50ms`. */
  budget: string;
  passed: boolean;
  /** The figure it was judged on, in words: `p99 38.2 ms`, `throughput -3.1% (interval -6.0% … -0.4%)`. */
  actual: string;
}

export interface BudgetVerdict {
  passed: boolean;
  results: BudgetResult[];
  /** The baseline run directory, with --baseline. */
  baseline?: string;
  /** With --repeat N: the runs the budgets were judged on (their distribution), and the baseline's. */
  repeat?: RepeatRecord;
}

export interface RepeatRecord {
  /** The run directories of the N runs, in the order they ran (the last one holds this report). */
  runs: string[];
  /** The baseline's re-runs, interleaved with the runs; empty when the baseline was not re-run. */
  baselineRuns: string[];
  /** Why the baseline was or was not re-run. */
  baselineNote?: string;
}
