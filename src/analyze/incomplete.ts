// Whether the run holds the evidence a verdict needs, and a finding that says what is missing
// when it does not. A verdict rests on the target's in-process telemetry over the load window
// and, unless --no-profile, its CPU profile; a part of the agent that failed in a target
// process (a hook, a collector, the profiler) leaves a hole as well. Without them, "no problem
// found" would be a guess: HOTPATH_INCOMPLETE (warning) takes its place, and `hotpath run`
// exits with EXIT_INCOMPLETE. A run driven with --url has no agent by design (the outside
// view, docs/run.md): nothing is missing there; nor in a run no agent reported to at all.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { loadWindow, targetThreads, type Window } from './signals/load-window.js';
import { failedParts, type AgentErrorRow } from './signals/agent-errors.js';
import { round } from './signals/stats.js';
import { incompleteAdvice } from './incomplete.advice.js';

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
    ...(telemetryMissing(gaps) ? ['the event loop, CPU, GC and memory of the target were not measured'] : []),
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
      ...(gaps.failed.length > 0
        ? {
            failedParts: gaps.failed.map((f) => f.what),
            agentErrors: gaps.failed.map((f) => ({ pid: f.pid, threadId: f.threadId, what: f.what, message: f.message })),
          }
        : {}),
    },
    recommendation: incompleteAdvice,
    impact: 0,
  };
}
