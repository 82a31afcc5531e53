// Whether the run holds the evidence a verdict needs, and a finding that says what is missing
// when it does not. A verdict rests on the target's in-process telemetry over the load window
// and, unless --no-profile, its CPU profile; a part of the agent that failed in a target
// process (a hook, a collector, the profiler) leaves a hole as well. Without them, "no problem
// found" would be a guess: HOTPATH_INCOMPLETE (warning) takes its place, and `hotpath run`
// exits with EXIT_INCOMPLETE. A run driven with --url has no agent by design (the outside
// view, docs/run.md): nothing is missing there; nor in a run no agent reported to at all.
// A run that did not complete (interrupted by Ctrl-C, failed) lacks the rest of its load,
// --url or not: the finding says in which phase it stopped and how much of the load ran (the
// target's own end is HOTPATH_TARGET_ENDED, target-ended.ts).

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { loadWindow, targetThreads, type Window } from './signals/load-window.js';
import { failedParts, type AgentErrorRow } from './signals/agent-errors.js';
import { round } from './signals/stats.js';
import { incompleteAdvice, interruptedAdvice } from './incomplete.advice.js';
import { describeProgress, loadProgress, progressShare } from './signals/load-progress.js';

export const INCOMPLETE_CODE = 'HOTPATH_INCOMPLETE';

/**
 * The target's samples must cover at least this share of the load window. Each sample covers
 * the time since the previous one (a blocked loop's late sample covers its block), so a healthy
 * agent covers ~100 %; below half, most of the load went unseen.
 */
export const MIN_TELEMETRY_COVERAGE = 0.5;

export interface DiagnosisGaps {
  /** The share of the load window the best-covered target thread's samples cover, 0..1. */
  telemetryCoverage: number;
  /** Samples of target threads inside the window. */
  samplesInWindow: number;
  /** A CPU profile of a target thread is missing (and one was asked for). */
  cpuProfileMissing: boolean;
  /** Parts of a target's agent that failed. */
  failed: AgentErrorRow[];
  /** What is missing, in words, for the finding's title and the report (empty: nothing). */
  missing: string[];
  /** The run did not complete (interrupted, failed): how it ended, in words. */
  unfinished?: string;
}

/**
 * The rest of a run that did not complete: interrupted (Ctrl-C) or failed, as its outcome's reason
 * says, with how much of the asked load ran; undefined for a completed run or one whose target
 * ended on its own (its own finding).
 */
export function unfinishedRun(run: RunData): string | undefined {
  const o = run.meta.outcome;
  if (o.status !== 'interrupted' && o.status !== 'failed' && o.status !== 'never-listened') return undefined;
  const reason = (o.reason ?? o.status).replace(/\.$/, '');
  const ran =
    run.load || run.meta.phases.some((p) => p.phase === 'load') ? `, ${describeProgress(loadProgress(run))}` : ', before the load started';
  return `the rest of the run (${reason.charAt(0).toLowerCase()}${reason.slice(1)}${ran})`;
}

/**
 * --url, or a run with no agent at all (a command run completes only once an agent reported its
 * listen, so that is the outside view too).
 */
const outsideView = (run: RunData) => typeof run.meta.options?.url === 'string' || run.threads.length === 0;
/** `hotpath run` records its resolved options: `profile` is true unless --no-profile. */
const profileWanted = (run: RunData) => run.meta.options?.profile === true;

/** What the run lacks for a verdict; `missing` is empty when it holds everything. */
export function diagnosisGaps(run: RunData): DiagnosisGaps {
  const unfinished = unfinishedRun(run);
  const gaps = agentGaps(run);
  return unfinished === undefined ? gaps : { ...gaps, unfinished, missing: [unfinished, ...gaps.missing] };
}

function agentGaps(run: RunData): DiagnosisGaps {
  if (outsideView(run)) return { telemetryCoverage: 0, samplesInWindow: 0, cpuProfileMissing: false, failed: [], missing: [] };
  const w = loadWindow(run);
  const targets = targetThreads(run);
  const coverage = Math.max(0, ...targets.map((t) => coverageOf(measuredSpans(t), w)));
  const samplesInWindow = targets.reduce(
    (n, t) => n + t.samples.filter((s) => !w || (s.t >= w.start && s.t - s.intervalMs <= w.end)).length,
    0,
  );
  const profiled = run.profiles.some((p) => p.kind === 'cpu' && targets.some((t) => t.pid === p.pid && t.threadId === p.threadId));
  const cpuProfileMissing = profileWanted(run) && !profiled;
  const failed = failedParts(run);
  const missing: string[] = [];
  if (coverage < MIN_TELEMETRY_COVERAGE)
    missing.push(
      samplesInWindow === 0
        ? "the target's telemetry (no sample during the load)"
        : `most of the target's telemetry (its samples cover ${round(coverage * 100, 0)} % of the load)`,
    );
  if (cpuProfileMissing) missing.push("the target's CPU profile");
  for (const f of failed)
    missing.push(f.what.startsWith('hook:') ? `the ${f.what.slice('hook:'.length)} hook (it failed)` : `the agent's ${f.what} (it failed)`);
  return { telemetryCoverage: coverage, samplesInWindow, cpuProfileMissing, failed, missing };
}

type Span = readonly [from: number, to: number];

/**
 * The time a thread's telemetry speaks for: each sample covers [t - intervalMs, t], and each
 * stall the watchdog reported covers its block (a loop that never came back sends no sample,
 * yet what it did is known: HOTPATH_EVENT_LOOP_STUCK says it).
 */
function measuredSpans(thread: {
  samples: readonly { t: number; intervalMs: number }[];
  stalls: readonly { start: number; durationMs: number }[];
}): Span[] {
  const spans: Span[] = [];
  for (const s of thread.samples) spans.push([s.t - s.intervalMs, s.t]);
  for (const s of thread.stalls) spans.push([s.start, s.start + s.durationMs]);
  return spans;
}

/** The share of the window covered by the spans. */
function coverageOf(measured: readonly Span[], w: Window | null): number {
  if (measured.length === 0) return 0;
  if (!w) return 1;
  const spans = measured
    .map(([a, b]) => [Math.max(w.start, a), Math.min(w.end, b)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let covered = 0;
  let reached = w.start;
  for (const [a, b] of spans) {
    if (b <= reached) continue;
    covered += b - Math.max(a, reached);
    reached = b;
  }
  return w.durationMs > 0 ? Math.min(1, covered / w.durationMs) : 1;
}

/** Whether the run lacks the telemetry every sample-based verdict needs. */
export function telemetryMissing(gaps: DiagnosisGaps): boolean {
  return gaps.telemetryCoverage < MIN_TELEMETRY_COVERAGE;
}

/** HOTPATH_INCOMPLETE, or undefined when the run holds the evidence a verdict needs. */
export function incompleteFinding(run: RunData, gaps: DiagnosisGaps = diagnosisGaps(run)): Finding | undefined {
  if (gaps.missing.length === 0) return undefined;
  const why =
    gaps.failed.length > 0
      ? ` The agent reported: ${gaps.failed.map((f) => `${f.what} failed in pid ${f.pid}${f.threadId > 0 ? ` thread ${f.threadId}` : ''} (${f.message})`).join('; ')}.`
      : telemetryMissing(gaps) || gaps.cpuProfileMissing
        ? ' The agent reported no error: it may not have loaded in the process that served, or the process ended or dropped its messages.'
        : '';
  const unseen = [
    ...(gaps.unfinished !== undefined ? ['the run stopped before the load it was asked for had run'] : []),
    ...(telemetryMissing(gaps) && !outsideView(run) ? ['the event loop, CPU, GC and memory of the target were not measured'] : []),
    ...(gaps.cpuProfileMissing ? ['no function can be blamed from a CPU profile'] : []),
    ...(gaps.failed.some((f) => f.what.startsWith('hook:'))
      ? ['what the failed hooks watch (growth of listeners, routes, timers, sync calls, handles) was not checked']
      : []),
  ];
  return {
    code: INCOMPLETE_CODE,
    category: 'incomplete',
    severity: 'warning',
    title: `The diagnosis is incomplete: missing ${gaps.missing.join(', ')}`,
    summary: `hotpath cannot vouch for this run: ${unseen.join('; ') || 'part of the evidence is missing'}, so no "healthy" verdict is given and the findings shown rest on what was measured.${why}`,
    evidence: {
      missing: gaps.missing,
      telemetryCoverage: round(gaps.telemetryCoverage, 3),
      samplesInWindow: gaps.samplesInWindow,
      cpuProfile: !gaps.cpuProfileMissing,
      ...(gaps.unfinished !== undefined ? { outcome: run.meta.outcome.status, loadShare: progressShare(loadProgress(run)) ?? 0 } : {}),
      ...(gaps.failed.length > 0
        ? {
            failedParts: gaps.failed.map((f) => f.what),
            agentErrors: gaps.failed.map((f) => ({ pid: f.pid, threadId: f.threadId, what: f.what, message: f.message })),
          }
        : {}),
    },
    recommendation: gaps.unfinished !== undefined && gaps.missing.length === 1 ? interruptedAdvice : incompleteAdvice,
    impact: 0,
  };
}
