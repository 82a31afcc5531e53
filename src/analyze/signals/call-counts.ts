// Calls per request of an app function, from the call counts the agents took in a short window of
// the load (run.callCounts: V8's precise coverage, docs/agent.md, Call counts): the calls made in
// the window divided by the requests the same thread finished in it (its telemetry, interpolated
// between samples). A sampling profile says where the time went, these say how often: a helper
// called 6,000 times per request, a pattern compiled once per request.

import { isAbsolute, join } from 'node:path';
import type { CallCounts, RunData, ThreadTelemetry } from '../../run-dir/run-data.js';
import type { FunctionRangeRow } from '../../agent/profiling/function-ranges.js';
import { scriptFunctions, scriptKey } from '../../profile/script-functions.js';
import { requestSeries, type RequestSeries } from './request-series.js';
import { runSourceLine } from '../../profile/run-source-maps.js';

/** Fewer requests than this in the window, and calls per request are not told (a request more or less would move them by a fifth). */
export const CALL_COUNT_MIN_REQUESTS = 5;

export interface CallRate {
  /** Calls counted in the window(s), the requests finished meanwhile, and their ratio. */
  calls: number;
  requests: number;
  perRequest: number;
}

/** A function as the analyzers hold it: name, file (relative to the cwd, or absolute), 1-based line and column. */
export interface FunctionAt {
  name: string;
  file: string;
  line: number;
  column: number;
}

/** Cumulative requests at `time`, linear between the samples around it. */
export function requestsAtTime(series: RequestSeries, time: number): number {
  const { t, cumulative } = series;
  if (t.length === 0 || time < t[0]) return 0;
  for (let i = 1; i < t.length; i++) {
    if (t[i] < time) continue;
    const span = t[i] - t[i - 1];
    const f = span > 0 ? (time - t[i - 1]) / span : 1;
    return cumulative[i - 1] + (cumulative[i] - cumulative[i - 1]) * f;
  }
  return cumulative[cumulative.length - 1];
}

/** Requests the thread finished between the window's start and end. */
export function requestsInWindow(thread: ThreadTelemetry, window: Pick<CallCounts, 'start' | 'end'>): number {
  const series = requestSeries(thread);
  return Math.max(0, requestsAtTime(series, window.end) - requestsAtTime(series, window.start));
}

/** The row of `fn` in one thread's counts: the innermost function at its position, else the only one of its name. */
function rowOf(counts: CallCounts, fn: FunctionAt, cwd: string): number | undefined {
  const file = isAbsolute(fn.file) ? fn.file : join(cwd, fn.file);
  const script = scriptFunctions(counts.scripts, file);
  if (script === undefined) return undefined;
  const name = fn.name === '(anonymous)' ? '' : fn.name;
  const at = fn.line > 0 ? script.at(fn.line - 1, Math.max(0, fn.column - 1)) : undefined;
  // A position that lands in another function (a source-mapped frame: the counts are in the
  // generated code's lines) falls back to the name, when it is unique in the script.
  if (at !== undefined && (at.name === name || name === '')) return at.count;
  const rows = rowsOf(counts, file).filter((r) => r[0] === name);
  return name !== '' && rows.length === 1 ? rows[0][5] : undefined;
}

function rowsOf(counts: CallCounts, file: string): readonly FunctionRangeRow[] {
  const key = scriptKey(file);
  for (const [url, rows] of Object.entries(counts.scripts)) if (scriptKey(url) === key) return rows;
  return [];
}

/**
 * Whether a window's counts can be used: V8 counted calls all through it. A window whose every
 * function ran exactly once while the thread finished CALL_COUNT_MIN_REQUESTS requests or more was
 * not counted (V8 back in best-effort coverage, which reports 1 for whatever ran: another
 * inspector session disabled the Profiler domain in it; agent/profiling/coverage-hold.ts).
 */
export function countsTrusted(counts: CallCounts, requests: number): boolean {
  if (requests < CALL_COUNT_MIN_REQUESTS) return true;
  let rows = 0;
  for (const script of Object.values(counts.scripts))
    for (const row of script) {
      if (row[5] > 1) return true;
      rows++;
    }
  return rows === 0;
}

/** Calls of `fn` counted in the run's trusted windows and the requests finished in them; undefined when no window knows it. */
function tally(run: RunData, fn: FunctionAt): { calls: number; requests: number } | undefined {
  let calls = 0;
  let requests = 0;
  let known = false;
  for (const c of run.callCounts ?? []) {
    const thread = run.threads.find((t) => t.pid === c.pid && t.threadId === c.threadId);
    if (thread === undefined) continue;
    const n = rowOf(c, fn, run.cwd);
    if (n === undefined) continue;
    const finished = requestsInWindow(thread, c);
    if (!countsTrusted(c, finished)) continue;
    known = true;
    calls += n;
    requests += finished;
  }
  return known ? { calls, requests } : undefined;
}

/**
 * Calls per request of `fn` over the run's call-count windows (all target threads that counted,
 * summed), or undefined without counts, without enough requests in the windows, or when no
 * window knows the function. A function the window ran 0 times is not in the counts: undefined.
 */
export function callsPerRequest(run: RunData, fn: FunctionAt): CallRate | undefined {
  if (resumable(run, fn)) return undefined;
  const t = tally(run, fn);
  if (t === undefined || t.requests < CALL_COUNT_MIN_REQUESTS) return undefined;
  return { calls: t.calls, requests: Math.round(t.requests), perRequest: t.calls / t.requests };
}

/**
 * Calls of `fn` counted, however few requests the windows held (a starved target): ratios between
 * two functions' calls (a helper's per call of its loop) need no requests.
 */
export function callsCounted(run: RunData, fn: FunctionAt): number | undefined {
  if (resumable(run, fn)) return undefined;
  return tally(run, fn)?.calls;
}

/**
 * What to say when the run drove a call-count window (meta.callCountWindow) but it caught too few
 * requests for calls per request (a target starved of CPU in it) or no call of the app's own
 * functions: the findings that use the counts say so rather than go without them silently.
 * Undefined when no window was driven or it holds enough requests.
 */
export function callCountShortfall(run: RunData): string | undefined {
  const w = run.meta.callCountWindow;
  if (w === undefined) return undefined;
  const counts = run.callCounts ?? [];
  let requests = 0;
  let untrusted = 0;
  for (const c of counts) {
    const thread = run.threads.find((t) => t.pid === c.pid && t.threadId === c.threadId);
    if (thread === undefined) continue;
    const finished = requestsInWindow(thread, c);
    if (countsTrusted(c, finished)) requests += finished;
    else untrusted += finished;
  }
  if (counts.length > 0 && requests >= CALL_COUNT_MIN_REQUESTS) return undefined;
  const ms = Math.round(w.until - w.from);
  const bound = w.latest ? ', its longest' : '';
  if (untrusted > 0)
    return `calls not counted: in the ${ms} ms window after the load${bound} every function of the app read one call while ${Math.round(untrusted)} requests finished (V8 stopped counting in it), so no calls per request are told`;
  if (counts.length === 0)
    return `no call counted: the ${ms} ms window after the load${bound} caught no call of the app's functions (${Math.round(w.requests)} requests finished in it)`;
  return `too few requests to count calls per request: the ${ms} ms window after the load${bound} caught ${Math.round(requests)} (${CALL_COUNT_MIN_REQUESTS} needed)`;
}

/**
 * Whether `fn` is an async function or a generator, as its declaration line reads: V8 counts each
 * resumption after an `await` or a `yield` as a call (a handler awaiting once read 2 calls per
 * request, a helper awaiting `fetch` and `.json()` 3 per call), so their counts are not calls.
 */
export function resumable(run: RunData, fn: FunctionAt): boolean {
  if (fn.line <= 0) return false;
  const file = isAbsolute(fn.file) ? fn.file : join(run.cwd, fn.file);
  const text = runSourceLine(run, file, fn.line);
  if (text === undefined) return false;
  const from = Math.max(0, fn.column - 1);
  // The declaration from a little before V8's position (a method's `async` precedes its name).
  const head = text.slice(Math.max(0, from - 40), from + 60);
  return /\basync\b/.test(head) || /function\s*\*|^\s*\*\s*[\w$]+\s*\(/.test(head);
}

/** Calls per request as said in a sentence: "6,000", "1", "0.5". */
export function describePerRequest(perRequest: number): string {
  if (perRequest >= 100) return Math.round(perRequest).toLocaleString('en-US');
  if (perRequest >= 10) return String(Math.round(perRequest));
  return String(Math.round(perRequest * 10) / 10);
}

/** One step of the path from the request's first app function down to a culprit, with its calls per request when counted. */
export interface PathStep {
  function: string;
  file: string;
  line: number;
  callsPerRequest?: number;
  /** The calls counted (callsPerRequest is rounded): ratios between steps are taken on these. */
  calls?: number;
}

/** The steps of `path` (outermost first), each with its calls per request when the run counted them. */
export function pathWithCalls(run: RunData, path: readonly (FunctionAt & { function?: string })[]): PathStep[] {
  return path.map((f) => {
    const rate = callsPerRequest(run, f);
    const calls = rate?.calls ?? callsCounted(run, f);
    return {
      function: f.function ?? f.name,
      file: f.file,
      line: f.line,
      ...(rate ? { callsPerRequest: round2(rate.perRequest) } : {}),
      ...(calls !== undefined ? { calls } : {}),
    };
  });
}

/** "handler (server.js:18, 1 per request) → buildIndex (server.js:11, 1 per request) → slugify (server.js:7, 6,000 per request)". */
export function describePath(steps: readonly PathStep[]): string {
  return steps
    .map(
      (s) =>
        `${s.function} (${s.file}:${s.line}${s.callsPerRequest !== undefined ? `, ${describePerRequest(s.callsPerRequest)} per request` : ''})`,
    )
    .join(' → ');
}

const round2 = (x: number) => Math.round(x * 100) / 100;
