// `hotpath run [options] -- <command...>`: start the server under the agent, drive load,
// collect, diagnose. Ctrl-C once stops load and still writes everything (exit 130); twice
// kills the target at once. A completed run whose diagnosis lacks evidence exits 3. The run directory's path is always printed on stderr.

import type { Command } from '../command.js';
import type { CliIO } from '../io.js';
import { styler } from '../io.js';
import { checkConflicts, type ParsedArgs } from '../../options/option-spec.js';
import { hotpathError } from '../../errors.js';
import { noResponsesReason } from '../../load/no-responses.js';
import { INCOMPLETE_CODE } from '../../analyze/incomplete.js';
import { run, type RunResult } from '../../run/run.js';
import { runOptionSpecs, type RunOptions } from '../../run/run-options.js';
import { displayPath, formatRunSummary, outcomeLine } from '../../run/run-summary.js';
import { resolve } from 'node:path';
import { readRunDir } from '../../profile/read-run.js';
import { budgetOptionSpecs, BUDGET_KEYS, type BudgetFlags } from '../../budget/budget-options.js';
import { applyBudgets, readBudgets, type AppliedBudgets } from '../../budget/apply-budgets.js';
import { formatBudgetLines } from '../../budget/judge-budgets.js';
import { experimentOptionSpecs, EXPERIMENT_KEYS } from '../../experiment/experiment-options.js';
import { parseVary } from '../../experiment/vary-spec.js';
import { runRepeated, runVary } from './run-series.js';
import { EXIT_BUDGET, EXIT_INCOMPLETE, EXIT_INTERRUPTED } from './run-exit-codes.js';

export { EXIT_BUDGET, EXIT_INCOMPLETE, EXIT_INTERRUPTED };

const details = `The command after \`--\` is started as given (node app.js, npm start, npx tsx app.ts,
node --import ./x.mjs app.mjs, a cluster primary...) with hotpath's agent preloaded
through NODE_OPTIONS. Load is driven at the port its server opens.

Examples:
  hotpath run -- node server.js
  hotpath run -c 50 -d 20s --path /api/users -- npm start
  hotpath run --setup login.json -H "authorization: Bearer x" -- node app.js
  hotpath run --url http://127.0.0.1:3000/   (a server already running: no agent)
  hotpath run --repeat 5 --assert 'p99<50ms' --baseline base-run/ --max-regression 5% -- node server.js
  hotpath run --vary '--max-semi-space-size=16,32,64,128' -- node server.js

Results go to .hotpath/<timestamp>-<name>/ (see docs/run-directory.md).`;

/**
 * A signal that arrives within this long of the first one is a repeat of it, not a second
 * Ctrl-C: `timeout`, a process manager or a shell's job control often signal hotpath and then
 * its whole process group (two SIGINTs a few ms apart), and that must not cost the run its
 * load results and report. A person's second Ctrl-C comes later than this.
 */
export const REPEAT_SIGNAL_WINDOW_MS = 500;

/** Ctrl-C (and SIGTERM/SIGHUP) handling for the duration of one run. */
function interruptHandling(io: CliIO) {
  const graceful = new AbortController();
  const kill = new AbortController();
  let firstAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (!graceful.signal.aborted) {
      firstAt = performance.now();
      io.stderr.write(`\nhotpath: ${signal}: stopping, collecting what was measured (Ctrl-C again to kill the target at once)\n`);
      graceful.abort(new Error(`interrupted by ${signal}`));
    } else if (performance.now() - firstAt < REPEAT_SIGNAL_WINDOW_MS) {
      io.stderr.write(
        `hotpath: ${signal} again within ${REPEAT_SIGNAL_WINDOW_MS} ms: taken as a repeat of the first (the same signal sent to hotpath and its group), not a second Ctrl-C\n`,
      );
    } else if (!kill.signal.aborted) {
      io.stderr.write('hotpath: killing the target now\n');
      kill.abort(new Error('killed'));
    }
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const sig of signals) process.on(sig, onSignal);
  return {
    signal: graceful.signal,
    killSignal: kill.signal,
    dispose: () => {
      for (const sig of signals) process.off(sig, onSignal);
    },
  };
}

export function exitCodeOf(result: RunResult): number {
  switch (result.meta.outcome.status) {
    case 'completed':
      return result.report?.findings.some((f) => f.code === INCOMPLETE_CODE) ? EXIT_INCOMPLETE : 0;
    case 'interrupted':
      return EXIT_INTERRUPTED;
    default:
      return 1;
  }
}

async function execute(args: ParsedArgs, io: CliIO): Promise<number> {
  if (args.positionals.length > 0) {
    throw hotpathError(
      'HOTPATH_ERR_MISSING_ARGUMENT',
      `Put the command that starts your server after \`--\`: hotpath run [options] -- ${args.positionals.join(' ')}`,
      { showUsage: true },
    );
  }
  // run() checks the run's own flags; the budget and experiment flags stop here, before a
  // baseline is read or anything starts.
  checkConflicts([...budgetOptionSpecs, ...experimentOptionSpecs], args.values);
  const budgetFlags = args.values as BudgetFlags;
  const budgets = readBudgets(budgetFlags);
  const baseline = budgetFlags.baseline === undefined ? undefined : resolve(io.cwd, budgetFlags.baseline);
  if (baseline !== undefined) await readRunDir(baseline);
  const repeat = (args.values.repeat as number | undefined) ?? 1;
  const vary = typeof args.values.vary === 'string' ? parseVary(args.values.vary) : undefined;
  if (vary && args.rest.length === 0) {
    throw hotpathError('HOTPATH_ERR_VARY', '--vary restarts the server once per value: give the command that starts it after `--`', {
      showUsage: true,
    });
  }
  const runValues = Object.fromEntries(
    Object.entries(args.values).filter(([k]) => !BUDGET_KEYS.includes(k) && !EXPERIMENT_KEYS.includes(k)),
  );
  const s = styler(io);
  let progressShown = false;
  const clearProgress = () => {
    if (progressShown) io.stderr.write('\r\u001b[2K');
    progressShown = false;
  };
  const say = (m: string) => {
    clearProgress();
    io.stderr.write(s.dim(`hotpath: ${m}`) + '\n');
  };
  // A live line on a terminal only; logs and CI get the status lines alone.
  const onLoadProgress = io.interactive
    ? (second: number, requests: number) => {
        io.stderr.write(`\r\u001b[2K${s.dim(`hotpath: load ${second} s, ${requests.toLocaleString('en-US')} requests`)}`);
        progressShown = true;
      }
    : undefined;
  const interrupts = interruptHandling(io);
  let runDir: string | undefined;
  if (vary || repeat > 1) {
    const ctx = {
      io,
      runValues: runValues as RunOptions,
      command: args.rest,
      signal: interrupts.signal,
      killSignal: interrupts.killSignal,
      say,
      clearProgress,
      json: args.values.json === true,
      ...(onLoadProgress ? { onLoadProgress } : {}),
    };
    try {
      return vary ? await runVary(ctx, vary, repeat) : await runRepeated(ctx, repeat, budgets, baseline);
    } finally {
      clearProgress();
      interrupts.dispose();
    }
  }
  try {
    const result = await run(
      { ...(runValues as RunOptions), command: args.rest },
      {
        signal: interrupts.signal,
        killSignal: interrupts.killSignal,
        env: io.env,
        cwd: io.cwd,
        onRunDir: (dir) => {
          runDir = dir;
          say(`run directory: ${displayPath(dir, io.cwd)}`);
        },
        onStatus: say,
        onLoadProgress,
      },
    );
    clearProgress();
    if (interrupts.killSignal.aborted) {
      io.stderr.write(`run directory: ${displayPath(result.runDir, io.cwd)}\n`);
      return EXIT_INTERRUPTED;
    }
    let applied: AppliedBudgets = {};
    if (result.report) {
      if (budgets.length > 0 || baseline !== undefined) applied = await applyBudgets(result.report, result.runDir, baseline, budgets);
      io.stderr.write(formatRunSummary(result.report, io.cwd, s, result.meta.warnings));
      if (applied.markdown) io.stderr.write(`\n${applied.markdown}`);
      if (applied.compareError)
        io.stderr.write(`${s.red('error')} the comparison with the baseline failed: ${applied.compareError.message}\n`);
      if (args.values.json === true) io.stdout.write(JSON.stringify(result.report, null, 2) + '\n');
      if (applied.verdict) io.stderr.write(formatBudgetLines(applied.verdict.results));
    } else {
      io.stderr.write(`hotpath ${outcomeLine(result.meta.outcome, s)}\nrun directory: ${displayPath(result.runDir, io.cwd)}\n`);
    }
    if (result.reportError) {
      io.stderr.write(
        `${s.red('error')} the diagnosis failed (a bug in hotpath): ${result.reportError.message}\n` +
          `The measurements are complete in the run directory; retry with \`hotpath report <dir> --debug\`.\n`,
      );
      return 1;
    }
    const nothing = result.report?.load ? noResponsesReason(result.report.load) : undefined;
    if (nothing !== undefined && result.meta.outcome.status === 'completed') {
      // A loop that never came back is why: the finding above names what holds it.
      const stuck = result.report?.findings.find((f) => f.code === 'HOTPATH_EVENT_LOOP_STUCK');
      throw hotpathError('HOTPATH_ERR_NO_RESPONSES', stuck ? `${nothing} ${stuck.title} (see the critical finding above).` : nothing);
    }
    const code = exitCodeOf(result);
    if (budgets.length > 0 && !result.report) return code === 0 ? EXIT_BUDGET : code;
    return applied.verdict && !applied.verdict.passed && (code === 0 || code === EXIT_INCOMPLETE) ? EXIT_BUDGET : code;
  } catch (err) {
    clearProgress();
    if (runDir) io.stderr.write(`run directory: ${displayPath(runDir, io.cwd)} (target.log has the target's output)\n`);
    throw err;
  } finally {
    interrupts.dispose();
  }
}

export const runCommand: Command = {
  name: 'run',
  summary: 'Start a server under the agent, drive load at it and diagnose it',
  usage: 'hotpath run [options] -- <command...>\n       hotpath run [options] --url <url>',
  details,
  options: [...runOptionSpecs, ...budgetOptionSpecs, ...experimentOptionSpecs],
  apiChecksOptions: true,
  run: execute,
};
