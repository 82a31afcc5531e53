// The budgets' verdict as report.json carries it (`budgets`): judged by src/budget/, declared
// here with the report's schema so that the report reads it without importing the layer above.

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
