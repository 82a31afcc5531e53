// `hotpath run --repeat N` and `hotpath run --vary`: the same load run several times, each a
// whole run with its own run directory (the server restarted, so each run meets the machine
// anew). --repeat judges budgets on the distribution of the runs, alternating with the
// baseline's command when it can be re-run; --vary runs once per value, interleaved, and ranks
// the values (docs/run.md, Repeated runs and Experiments).

import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { CliIO } from '../io.js';
import { styler } from '../io.js';
import { run, type RunResult } from '../../run/run.js';
import type { RunOptions } from '../../run/run-options.js';
import { displayPath, formatRunSummary, outcomeLine } from '../../run/run-summary.js';
import { readRunDir } from '../../profile/read-run.js';
import type { RunData } from '../../run-dir/run-data.js';
import type { Budget, BudgetVerdict } from '../../budget/budget.js';
import { applyBudgets } from '../../budget/apply-budgets.js';
import { formatBudgetLines } from '../../budget/judge-budgets.js';
import { judgeRepeated, type RepeatBaseline } from '../../budget/judge-repeated.js';
import { repeatLines, repeatSummary } from '../../experiment/repeat-summary.js';
import { runFigures, type RunFigures } from '../../experiment/run-figures.js';
import { applyVariant, variantLabel, type VarySpec } from '../../experiment/vary-spec.js';
import { judgeVary } from '../../experiment/judge-vary.js';
import type { VaryResult, VaryRun } from '../../experiment/vary-result.js';
import { createNamedDir, runName } from '../../run-dir/create-run-dir.js';
import { renderVaryMarkdown } from '../../experiment/render-vary.js';
import { EXIT_BUDGET, EXIT_FAILED, EXIT_INTERRUPTED } from './run-exit-codes.js';

export interface SeriesContext {
  io: CliIO;
  /** The run flags, without the budget and experiment flags. */
  runValues: RunOptions;
  command: string[];
  signal: AbortSignal;
  killSignal: AbortSignal;
  say(message: string): void;
  onLoadProgress?: (second: number, requests: number) => void;
  clearProgress(): void;
  json: boolean;
}

/** File paths of the run flags made absolute, so a run started in another directory reads the same files. */
function absolutePaths(values: RunOptions, cwd: string): RunOptions {
  const abs = (f: unknown) => (typeof f === 'string' ? resolve(cwd, f) : f);
  const v = values as Record<string, unknown>;
  const out: Record<string, unknown> = { ...v, out: abs(v.out ?? '.hotpath') };
  for (const k of ['setup', 'bodyFile', 'scenario', 'hdrLog']) if (v[k] !== undefined) out[k] = abs(v[k]);
  return out as RunOptions;
}

async function oneRun(ctx: SeriesContext, label: string, command: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<RunResult> {
  ctx.say(`${label}: ${command.join(' ')}${cwd !== ctx.io.cwd ? ` (in ${cwd})` : ''}`);
  const result = await run(
    { ...absolutePaths(ctx.runValues, ctx.io.cwd), command },
    {
      signal: ctx.signal,
      killSignal: ctx.killSignal,
      env,
      cwd,
      onRunDir: (dir) => ctx.say(`run directory: ${displayPath(dir, ctx.io.cwd)}`),
      onStatus: ctx.say,
      ...(ctx.onLoadProgress ? { onLoadProgress: ctx.onLoadProgress } : {}),
    },
  );
  ctx.clearProgress();
  const f = result.report ? runFigures(result.runDir, result.report) : undefined;
  ctx.say(`${label}: ${f ? figuresLine(f) : `no load results (${result.meta.outcome.status})`}`);
  return result;
}

function figuresLine(f: RunFigures): string {
  return [
    `${f.rps.toFixed(1)} req/s`,
    `p99 ${f.p99Ms.toFixed(1)} ms`,
    ...(f.gcShare !== undefined ? [`GC ${(f.gcShare * 100).toFixed(1)}%`] : []),
    ...(f.rssMaxBytes !== undefined ? [`RSS ${(f.rssMaxBytes / 1048576).toFixed(0)} MB`] : []),
  ].join(', ');
}

const stopped = (ctx: SeriesContext) => ctx.signal.aborted || ctx.killSignal.aborted;

/**
 * Whether the baseline's command can be re-run between the runs, and why (not). Re-running
 * it is sound only when it runs other code than the new runs: another directory, or another
 * command. The same command in the same directory would measure the new code and call it the
 * baseline, and a directory that is not on this machine (an artifact from CI) cannot be run.
 */
export function baselineRerun(base: RunData, command: readonly string[], cwd: string): { rerun: boolean; note: string } {
  const cmd = base.meta.command;
  if (cmd.length === 0 || /^https?:\/\//i.test(cmd[0] ?? '')) {
    return {
      rerun: false,
      note: 'the baseline drove a server already running (--url): it has no command to re-run; judged against its recorded run',
    };
  }
  if (!existsSync(base.meta.cwd)) {
    return { rerun: false, note: `the baseline's directory ${base.meta.cwd} is not on this machine: judged against its recorded run` };
  }
  if (resolve(base.meta.cwd) === resolve(cwd) && cmd.join('\u0000') === command.join('\u0000')) {
    return {
      rerun: false,
      note: "the baseline's command and directory are this run's: re-running it would measure the new code, so it is judged against its recorded run",
    };
  }
  return { rerun: true, note: `the baseline's command (${cmd.join(' ')} in ${base.meta.cwd}) re-run before each run, in turn` };
}

/** `--repeat N`: N runs (each after a baseline re-run when that is sound), budgets on their distribution. */
export async function runRepeated(
  ctx: SeriesContext,
  repeat: number,
  budgets: readonly Budget[],
  baselineDir: string | undefined,
): Promise<number> {
  const { io } = ctx;
  const s = styler(io);
  const base = baselineDir !== undefined ? await readRunDir(baselineDir) : undefined;
  const plan = !base
    ? undefined
    : ctx.command.length === 0
      ? { rerun: false, note: 'this run drives a server already running (--url): judged against the recorded baseline run' }
      : baselineRerun(base, ctx.command, io.cwd);
  if (plan) ctx.say(`baseline: ${plan.note}`);
  const results: RunResult[] = [];
  const baseResults: RunResult[] = [];
  for (let i = 1; i <= repeat && !stopped(ctx); i++) {
    if (base && plan?.rerun) {
      baseResults.push(await oneRun(ctx, `baseline ${i}/${repeat}`, base.meta.command, io.env, base.meta.cwd));
      if (stopped(ctx)) break;
    }
    results.push(await oneRun(ctx, `run ${i}/${repeat}`, ctx.command, io.env, io.cwd));
  }
  if (ctx.killSignal.aborted) return EXIT_INTERRUPTED;
  const reports = results.flatMap((r) => (r.report ? [r.report] : []));
  const last = [...results].reverse().find((r) => r.report);
  if (!last?.report) {
    io.stderr.write(`hotpath: none of the ${results.length} runs was diagnosed; their run directories hold what was measured\n`);
    return results.some((r) => r.meta.outcome.status === 'interrupted') ? EXIT_INTERRUPTED : EXIT_FAILED;
  }
  // The comparison files (compare.md, compare.json) go into the last run: against the last
  // baseline re-run when there is one, else against the recorded baseline.
  const lastBase = [...baseResults].reverse().find((r) => r.report)?.runDir ?? baselineDir;
  const applied = lastBase !== undefined ? await applyBudgets(last.report, last.runDir, lastBase, []) : {};
  let verdict: BudgetVerdict | undefined;
  if (budgets.length > 0) {
    const baseline: RepeatBaseline | undefined = !base
      ? undefined
      : plan?.rerun
        ? { kind: 'reruns', loads: baseResults.flatMap((r) => (r.report?.load && r.report.load.requests.total > 0 ? [r.report.load] : [])) }
        : base.load && base.load.requests.total > 0
          ? { kind: 'recorded', load: base.load }
          : { kind: 'error', error: new Error(`the baseline run ${baselineDir} has no load results`) };
    const results_ = judgeRepeated(budgets, reports, baseline);
    verdict = {
      passed: results_.every((r) => r.passed),
      results: results_,
      ...(baselineDir !== undefined ? { baseline: baselineDir } : {}),
      repeat: {
        runs: results.map((r) => r.runDir),
        baselineRuns: baseResults.map((r) => r.runDir),
        ...(plan ? { baselineNote: plan.note } : {}),
      },
    };
    last.report.budgets = verdict;
  }
  // The series' medians, with or without budgets: recorded where CI reads them, printed below.
  const summary = repeatSummary({ runs: results, baselineRuns: baseResults, baselineNote: plan?.note });
  last.report.repeat = summary;
  await writeFile(join(last.runDir, 'report.json'), JSON.stringify(last.report, null, 2) + '\n');
  io.stderr.write(formatRunSummary(last.report, io.cwd, s, last.meta.warnings));
  if (applied.markdown) io.stderr.write(`\n${applied.markdown}`);
  if (applied.compareError) io.stderr.write(`${s.red('error')} the comparison with the baseline failed: ${applied.compareError.message}\n`);
  io.stderr.write(`\nrepeated runs:\n${repeatLines(summary).join('\n')}\n`);
  if (ctx.json) io.stdout.write(JSON.stringify(last.report, null, 2) + '\n');
  if (verdict) io.stderr.write(formatBudgetLines(verdict.results));
  if (stopped(ctx)) return EXIT_INTERRUPTED;
  if (results.some((r) => r.meta.outcome.status !== 'completed')) return EXIT_FAILED;
  return verdict && !verdict.passed ? EXIT_BUDGET : 0;
}

/**
 * `--vary`: one run per value, the values interleaved and repeated (the order reversed every
 * other round, so no value always runs first on a warming machine); one table, vary.md and
 * vary.json in a directory of the experiment's own beside the runs' (`<timestamp>-vary-<name>`).
 */
export async function runVary(ctx: SeriesContext, spec: VarySpec, repeat: number): Promise<number> {
  const { io } = ctx;
  const runs: VaryRun[] = [];
  const total = repeat * spec.values.length;
  for (let round = 0; round < repeat && !stopped(ctx); round++) {
    const values = round % 2 === 0 ? spec.values : [...spec.values].reverse();
    for (const value of values) {
      if (stopped(ctx)) break;
      const v = applyVariant(spec, value, ctx.command, io.env);
      const order = runs.length + 1;
      const r = await oneRun(ctx, `run ${order}/${total} ${variantLabel(spec, value)}`, v.command, v.env, io.cwd);
      const figures = r.report ? runFigures(r.runDir, r.report) : undefined;
      runs.push({
        value,
        order,
        runDir: r.runDir,
        ...(figures
          ? { figures }
          : {
              failed: r.reportError
                ? `the diagnosis failed: ${r.reportError.message}`
                : `no load results: ${outcomeLine(r.meta.outcome, styler({ color: false }))}`,
            }),
      });
    }
  }
  if (ctx.killSignal.aborted) return EXIT_INTERRUPTED;
  const result = judgeVary(spec, ctx.command, repeat, runs);
  const md = renderVaryMarkdown(result);
  if (runs.length > 0) await writeVaryFiles(ctx, result, md);
  io.stderr.write(`\n${md}`);
  if (ctx.json) io.stdout.write(JSON.stringify(result, null, 2) + '\n');
  if (stopped(ctx)) return EXIT_INTERRUPTED;
  return result.best && runs.every((r) => r.figures) ? 0 : EXIT_FAILED;
}

/** vary.json and vary.md into the experiment's own directory; a failure to write them is said, the table is still printed. */
async function writeVaryFiles(ctx: SeriesContext, result: VaryResult, md: string): Promise<void> {
  const { io } = ctx;
  const out = absolutePaths(ctx.runValues, io.cwd).out ?? '.hotpath';
  try {
    const dir = await createNamedDir(out, `vary-${runName(ctx.command)}`);
    await writeFile(join(dir, 'vary.json'), JSON.stringify(result, null, 2) + '\n');
    await writeFile(join(dir, 'vary.md'), md);
    ctx.say(`vary.md and vary.json: ${displayPath(dir, io.cwd)}`);
  } catch (err) {
    io.stderr.write(`hotpath: vary.md and vary.json were not written into ${out}: ${(err as Error).message}\n`);
  }
}
