// The budget flags of `hotpath run` (docs/run.md, Budgets), declared as data beside the run's
// own flags; the CLI judges them once the run is written.

import type { OptionSpec, OptionValues } from '../options/option-spec.js';

export const budgetOptionSpecs = [
  {
    key: 'assert',
    flag: 'assert',
    type: 'strings',
    valueName: '<budget>',
    description:
      "A budget the run must meet (repeatable): 'p99<50ms', 'rps>2000', 'errors<1%', 'no critical', 'no warning'; a failed budget exits 4",
  },
  {
    key: 'baseline',
    flag: 'baseline',
    type: 'string',
    valueName: '<run-dir>',
    description: 'Compare this run with a baseline run directory (writes compare.md and compare.json into the new run)',
  },
  {
    key: 'maxRegression',
    flag: 'max-regression',
    type: 'string',
    valueName: '<percent>',
    description:
      'With --baseline: fail (exit 4) when throughput, p50 or p99 is worse than the baseline by more than this, beyond noise (e.g. 5%)',
  },
] as const satisfies readonly OptionSpec[];

export const BUDGET_KEYS: readonly string[] = budgetOptionSpecs.map((s) => s.key);

/** The budget flags as given (all optional), typed from the declaration. */
export type BudgetFlags = OptionValues<typeof budgetOptionSpecs>;
