// Outgoing HTTP requests made on the request path (the agent's outgoing-calls hook), as totals
// over the load window per call site, and the app frame that made them: the first frame of the
// captured stack outside node internals and node_modules (see appCallers in culprit.ts).

import type { ThreadTelemetry } from '../../run-dir/run-data.js';
import type { CallSite, GrowthMessage } from '../../agent/protocol.js';
import type { Window } from './load-window.js';
import { appCallers } from './culprit.js';
import { windowGrowth } from './growth-series.js';

type OutgoingEntry = NonNullable<GrowthMessage['outgoing']>[number];

export interface OutgoingWait {
  api: string;
  origin: string;
  /** Completed requests in the window and the time they waited, ms. */
  completed: number;
  totalMs: number;
  /** node:http only: answered requests that went out on a new connection. */
  newConnections?: number;
  site?: CallSite;
  /** The app function that called `site`'s. */
  caller?: CallSite;
}

const key = (e: OutgoingEntry) => `${e.api} ${e.origin} ${e.site?.file ?? ''}:${e.site?.line ?? 0}:${e.site?.column ?? 0}`;

/** Cumulative totals turned into the window's (last report minus the last one before it), longest wait first. */
export function outgoingWaits(thread: ThreadTelemetry, w: Window | null): OutgoingWait[] {
  const bounds = windowGrowth(thread, w);
  if (!bounds) return [];
  const { before, end } = bounds;
  return (end.outgoing ?? []).map((e) => {
    const prev = before?.outgoing?.find((p) => key(p) === key(e));
    const [site, caller] = appCallers(e);
    return {
      api: e.api, origin: e.origin,
      completed: e.completed - (prev?.completed ?? 0), totalMs: e.totalMs - (prev?.totalMs ?? 0),
      ...(e.newConnections !== undefined ? { newConnections: e.newConnections - (prev?.newConnections ?? 0) } : {}),
      ...(site ? { site } : {}),
      ...(caller ? { caller } : {}),
    };
  }).filter((x) => x.completed > 0).sort((a, b) => b.totalMs - a.totalMs);
}
