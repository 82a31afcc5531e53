// The requests the agents noted left unanswered (SampleMessage.unanswered: cumulative counts by
// route), each counted once, in the load it came from: the measured load, or the extra load the
// run drives after it when the measured one left requests unanswered (meta.throwWindow,
// run/throw-watch-window.ts). The agents note a request when its connection closes still
// waiting: the measured load's when it ends, the extra load's once that is stopped. So the notes
// a thread sent before the extra load was stopped (`throwWindow.until`) are the measured load's,
// and the rest are the extra load's. Runs before 2026-11-28 lack `until`: their counts are not
// told apart (every note reads as the measured load's, and `split` is false).
import type { UnansweredRoute } from '../../agent/protocol.js';
import type { RunData, ThreadTelemetry } from '../../run-dir/run-data.js';
import { targetThreads } from './load-window.js';

export interface ThreadUnanswered {
  thread: ThreadTelemetry;
  /** Routes with the requests the measured load left unanswered (count > 0 only). */
  measured: UnansweredRoute[];
  /** Routes with the requests the extra load after it left unanswered (count > 0 only). */
  extra: UnansweredRoute[];
}

export interface UnansweredWindows {
  threads: ThreadUnanswered[];
  /** The run tells the two loads' notes apart. */
  split: boolean;
}

const key = (r: UnansweredRoute): string => `${r.method} ${r.route}`;

function lastNoted(thread: ThreadTelemetry, before = Infinity): UnansweredRoute[] {
  for (let i = thread.samples.length - 1; i >= 0; i--) {
    const s = thread.samples[i];
    if (s.unanswered !== undefined && s.t < before) return s.unanswered;
  }
  return [];
}

/** Each target thread's noted routes, split between the measured load and the extra load after it. */
export function unansweredWindows(run: RunData): UnansweredWindows {
  const until = run.meta.throwWindow?.until;
  const threads: ThreadUnanswered[] = [];
  for (const thread of targetThreads(run)) {
    const all = lastNoted(thread);
    if (all.length === 0) continue;
    if (until === undefined) {
      threads.push({ thread, measured: all.filter((r) => r.count > 0), extra: [] });
      continue;
    }
    const before = new Map(lastNoted(thread, until).map((r) => [key(r), r]));
    const extra = all.map((r) => ({ ...r, count: r.count - (before.get(key(r))?.count ?? 0) })).filter((r) => r.count > 0);
    // The measured routes keep their oldest wait as of the measured load's end.
    threads.push({ thread, measured: [...before.values()].filter((r) => r.count > 0), extra });
  }
  return { threads, split: until !== undefined };
}

/** Requests noted over every target thread, in one load's routes. */
export function notedTotal(routes: readonly UnansweredRoute[]): number {
  return routes.reduce((a, r) => a + r.count, 0);
}
