// The experiment flags of `hotpath run` (docs/run.md, Repeated runs and Experiments), declared
// as data beside the run's own flags and the budget flags.

import type { OptionSpec } from '../options/option-spec.js';

export const experimentOptionSpecs: readonly OptionSpec[] = [
  {
    key: 'repeat',
    flag: 'repeat',
    type: 'integer',
    min: 1,
    max: 50,
    default: 1,
    valueName: '<n>',
    description:
      'Run the load n times (each a whole run), alternating with the baseline when it can be re-run; budgets are judged on the distribution (medians with 95% intervals)',
  },
  {
    key: 'vary',
    flag: 'vary',
    type: 'string',
    valueName: '<flag=v1,v2,…>',
    description:
      "Run once per value of a node flag ('--max-semi-space-size=16,32,64') or an environment variable ('NAME=a,b'), interleaved (and repeated with --repeat); prints one table with the best value (vary.md, vary.json)",
    conflicts: ['url', 'baseline', 'assert', 'maxRegression'],
  },
];

export const EXPERIMENT_KEYS = experimentOptionSpecs.map((s) => s.key);
