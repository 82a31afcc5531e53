// Timers that requests wait for, from the agent's timer hook: per creation site over the load
// window, the timeouts created and fired and the delays they asked for. A timeout that fires
// was waited out in full (a sleep, a backoff, a poll, a stand-in for a slow call); one that is
// cleared (a guard that the answer beat) delayed nobody. So the time waited on a site's timers
// is its fired timeouts times their mean delay.

import type { ThreadTelemetry } from '../../run-dir/run-data.js';
import type { CallSite, GrowthMessage } from '../../agent/protocol.js';
import type { Window } from './load-window.js';
import { appCallers } from './culprit.js';
import { windowGrowth } from './growth-series.js';

type TimerEntry = GrowthMessage['timers'][number];

export interface TimerWait {
  /** The app frame that created the timers, and the app function that called it. */
  site?: CallSite;
  caller?: CallSite;
  /** The app functions further up the stack that led to `caller`, nearest first. */
  through?: CallSite[];
  created: number;
  fired: number;
  /** Mean delay asked for, ms. */
  meanDelayMs: number;
  /** Fired timeouts × mean delay, ms. */
  waitedMs: number;
}

const key = (e: TimerEntry) => `${e.kind} ${e.site?.file ?? ''}:${e.site?.line ?? 0}:${e.site?.column ?? 0}`;

/** Timeout sites over the window (last report minus the last one before it), most waited first. */
export function timerWaits(thread: ThreadTelemetry, w: Window | null): TimerWait[] {
  const bounds = windowGrowth(thread, w);
  if (!bounds) return [];
  const { before, end } = bounds;
  return end.timers
    .filter((e) => e.kind === 'timeout' && e.delayMs !== undefined)
    .map((e) => {
      const prev = before?.timers.find((p) => key(p) === key(e));
      const created = e.created - (prev?.created ?? 0);
      const fired = e.fired - (prev?.fired ?? 0);
      const meanDelayMs = created > 0 ? ((e.delayMs ?? 0) - (prev?.delayMs ?? 0)) / created : 0;
      const [site, caller, ...through] = appCallers(e);
      return {
        ...(site ? { site } : {}),
        ...(caller ? { caller } : {}),
        ...(through.length > 0 ? { through } : {}),
        created,
        fired,
        meanDelayMs,
        waitedMs: fired * meanDelayMs,
      };
    })
    .filter((x) => x.fired > 0)
    .sort((a, b) => b.waitedMs - a.waitedMs);
}
