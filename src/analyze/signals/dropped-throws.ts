// Where requests left unanswered were dropped, when an error was: after a load that left requests
// unanswered, the agents followed every exception the app threw during a little more load
// (agent/profiling/throw-watch.ts: where it was thrown, and where one step from it stopped, which
// is the first statement of the `catch` that took it), and the CLI recorded how many requests that
// extra load got answered and how many it left unanswered (meta.throwWindow). An error thrown about
// once per request left unanswered (between DROP_MIN_RATIO and DROP_MAX_RATIO times as often), and
// rarely enough that the answered requests cannot all throw it, is where those requests were
// dropped: a `catch` that logs and never answers, an async handler's rejection nobody answers (an
// Express 4 route, whose router does not look at the promise), an error path that returns.
import type { CallSite } from '../../agent/protocol.js';
import type { RunData } from '../../run-dir/run-data.js';
import type { Culprit } from '../finding.js';
import { mapCallSite, runResolver } from '../../profile/run-source-maps.js';
import { siteCulprit } from './culprit.js';
import { targetThreads } from './load-window.js';
import { notedTotal, unansweredWindows } from './unanswered-windows.js';

/** Throws per request left unanswered in the extra load, for the error to be where they were dropped. */
export const DROP_MIN_RATIO = 0.5;
export const DROP_MAX_RATIO = 2;
/** Requests the extra load must have left unanswered (one could be a request cut by the load's end). */
export const DROP_MIN_UNANSWERED = 2;

export interface DropSite {
  /** Times the error was thrown in the extra load, and the requests it left unanswered and answered. */
  count: number;
  unanswered: number;
  answered: number;
  /** The app frame it was thrown in (after source maps). */
  thrownAt: Culprit;
  /** The app code that handled it, when one step from the throw stopped in the app. */
  handledAt?: Culprit;
  /** The handler is a `catch` in one of the functions the error went through (not code elsewhere that ran next). */
  caughtInStack: boolean;
  /** The function named: the one whose catch took it, else the outermost app function it went through. */
  culprit: Culprit;
}

const isAppFile = (file: string): boolean =>
  file !== '' && !file.startsWith('node:') && !/[\\/]node_modules[\\/]/.test(file) && (file.startsWith('file://') || file.startsWith('/'));

const sameFunction = (a: CallSite, b: CallSite): boolean =>
  a.file === b.file &&
  a.functionLine !== undefined &&
  a.functionLine === b.functionLine &&
  a.functionColumn !== undefined &&
  a.functionColumn === b.functionColumn;

/**
 * Requests the extra load left unanswered as the agents saw them: those they noted after it was
 * stopped (signals/unanswered-windows.ts); in a run that does not tell the loads' notes apart,
 * every request they noted left unanswered (the routes' counts of their last sample) less those
 * the measured load left (in flight at its end or timed out). The extra load's own count holds
 * the requests in flight when it was stopped, which the server mostly answered.
 */
export function unansweredAfterLoad(run: RunData): number | undefined {
  const load = run.load;
  if (load === undefined) return undefined;
  const windows = unansweredWindows(run);
  if (windows.split && windows.threads.length > 0) return windows.threads.reduce((a, t) => a + notedTotal(t.extra), 0);
  let noted: number | undefined;
  for (const t of targetThreads(run)) {
    const last = [...t.samples].reverse().find((x) => x.unanswered !== undefined);
    if (last?.unanswered !== undefined) noted = (noted ?? 0) + last.unanswered.reduce((a, e) => a + e.count, 0);
  }
  return noted === undefined ? undefined : Math.max(0, noted - load.requests.inFlightAtEnd - load.errors.timeouts);
}

/** The error thrown about once per request the extra load left unanswered, where it was thrown and handled. */
export function droppedThrows(run: RunData): DropSite | undefined {
  const window = run.meta.throwWindow;
  // A capped watch followed only the first exceptions: its counts say nothing of rates.
  if (window === undefined || run.throws === undefined || run.throws.some((t) => t.capped === true)) return undefined;
  const w = { ...window, unanswered: unansweredAfterLoad(run) ?? window.unanswered };
  if (w.unanswered < DROP_MIN_UNANSWERED) return undefined;
  // The same throw and handler through different node frames (a timer's callback, a tick) count together.
  const merged = new Map<string, { count: number; frames: CallSite[]; handledAt?: CallSite }>();
  for (const t of run.throws)
    for (const g of t.groups) {
      const frames = g.frames.filter((f) => isAppFile(f.file));
      if (frames.length === 0) continue;
      const handledAt = g.handledAt !== undefined && isAppFile(g.handledAt.file) ? g.handledAt : undefined;
      const key = `${t.pid}:${t.threadId}|${frames.map((f) => `${f.file}:${f.line}:${f.column}`).join('|')}|${handledAt ? `${handledAt.line}:${handledAt.column}` : '-'}`;
      const e = merged.get(key) ?? { count: 0, frames, ...(handledAt ? { handledAt } : {}) };
      e.count += g.count;
      merged.set(key, e);
    }
  // Closest to one throw per unanswered request; the more frequent of two equally close.
  const distance = (n: number): number => Math.abs(Math.log(n / w.unanswered));
  const best = [...merged.values()]
    .filter((e) => e.count >= w.unanswered * DROP_MIN_RATIO && e.count <= w.unanswered * DROP_MAX_RATIO)
    .sort((a, b) => distance(a.count) - distance(b.count) || b.count - a.count)[0];
  if (best === undefined) return undefined;
  const resolver = runResolver(run);
  const map = (s: CallSite): Culprit => siteCulprit(mapCallSite(s, resolver), run.cwd);
  const handler = best.handledAt;
  const catcher = handler === undefined ? undefined : best.frames.find((f) => sameFunction(f, handler));
  const thrownAt = map(best.frames[0]);
  const handledAt = handler === undefined ? undefined : map(catcher ? { ...handler, function: catcher.function } : handler);
  const outermost = map(best.frames[best.frames.length - 1]);
  return {
    count: best.count,
    unanswered: w.unanswered,
    answered: w.answered,
    thrownAt,
    ...(handledAt ? { handledAt } : {}),
    caughtInStack: catcher !== undefined,
    culprit: catcher !== undefined && handledAt !== undefined ? handledAt : outermost,
  };
}

/** " In a little more load after it, 10 requests were left unanswered while an error thrown in f (a.ts:3) was caught 10 times by g's catch (a.ts:9): ..." */
export function dropSentence(d: DropSite): string {
  const c = (x: Culprit): string => `${x.function} (${x.file}:${x.line})`;
  const thrown = `an error thrown in ${c(d.thrownAt)}`;
  const times = d.count === 1 ? 'once' : `${d.count} times`;
  const where =
    d.caughtInStack && d.handledAt !== undefined
      ? d.handledAt.function === d.thrownAt.function && d.handledAt.file === d.thrownAt.file
        ? `${thrown} was caught ${times} by its own catch at ${d.handledAt.file}:${d.handledAt.line}`
        : `${thrown} was caught ${times} by the catch of ${d.handledAt.function} at ${d.handledAt.file}:${d.handledAt.line}`
      : d.handledAt !== undefined
        ? `${thrown} left ${c(d.culprit)} ${times} and was next handled by ${c(d.handledAt)}`
        : d.culprit.function === d.thrownAt.function && d.culprit.file === d.thrownAt.file
          ? `${thrown} was handled by no app code, ${times}`
          : `${thrown} left ${c(d.culprit)} ${times} with no app code handling it`;
  return (
    ` In a little more load after it (not measured), ${d.unanswered} requests were left unanswered while ${where}: ` +
    `about once per request left unanswered${d.answered > 0 ? `, against ${d.answered} answered` : ''}, so the error is where they were dropped; ` +
    `nothing answers the request on that path.`
  );
}
