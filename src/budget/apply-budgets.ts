// After `hotpath run`: compares the new run with its baseline (--baseline), judges the budgets
// (--assert, --max-regression), and records the verdict in report.json (`budgets`). Budgets are
// read before the run (readBudgets), so a typo costs no run.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hotpathError } from '../errors.js';
import type { Report } from '../report/report-schema.js';
import { compareRunDirs } from '../compare/compare-runs.js';
import { writeComparison } from '../compare/write-comparison.js';
import type { Comparison } from '../report/compare-schema.js';
import { DEFAULT_MIN_EFFECT } from '../compare/metric-verdict.js';
import type { Budget, BudgetVerdict } from './budget.js';
import { parseBudget, parseMaxRegression } from './parse-budget.js';
import { judgeBudgets } from './judge-budgets.js';
import type { BudgetFlags } from './budget-options.js';

export function readBudgets(flags: BudgetFlags): Budget[] {
  if (flags.maxRegression !== undefined && flags.baseline === undefined) {
    throw hotpathError('HOTPATH_ERR_BUDGET', '--max-regression needs a run to compare with: add --baseline <run-dir>', { showUsage: true });
  }
  return [
    ...(flags.assert ?? []).map(parseBudget),
    ...(flags.maxRegression !== undefined ? [parseMaxRegression(flags.maxRegression)] : []),
  ];
}

export interface AppliedBudgets {
  verdict?: BudgetVerdict;
  comparison?: Comparison;
  /** compare.md, with a baseline. */
  markdown?: string;
  /** Why the comparison could not be made. */
  compareError?: Error;
}

export async function applyBudgets(
  report: Report,
  runDir: string,
  baseline: string | undefined,
  budgets: readonly Budget[],
): Promise<AppliedBudgets> {
  const out: AppliedBudgets = {};
  if (baseline !== undefined) {
    const reg = budgets.find((b) => b.kind === 'regression');
    try {
      const { comparison, diff } = await compareRunDirs(baseline, runDir, {
        minEffect: reg?.kind === 'regression' ? reg.maxShare : DEFAULT_MIN_EFFECT,
      });
      out.comparison = comparison;
      out.markdown = await writeComparison(comparison, diff);
    } catch (err) {
      out.compareError = err as Error;
    }
  }
  if (budgets.length === 0) return out;
  const results = judgeBudgets(budgets, report, out.comparison ?? out.compareError);
  out.verdict = { passed: results.every((r) => r.passed), results, ...(baseline !== undefined ? { baseline } : {}) };
  report.budgets = out.verdict;
  await writeFile(join(runDir, 'report.json'), JSON.stringify(report, null, 2) + '\n');
  return out;
}
