// Outgoing HTTP requests made on the request path (the agent's outgoing-calls hook), as totals
// over the load window per call site, and the app frame that made them: the first frame of the
// captured stack outside node internals and node_modules (see appCallers in culprit.ts). For
// node:http, the part of the wait spent queued for a socket of the caller's http.Agent; for
// every call site, how many of its calls were in flight over time (concurrencyBand).

import type { RunData, ThreadTelemetry } from '../../run-dir/run-data.js';
import type { Culprit } from '../finding.js';
import type { CallSite, GrowthMessage } from '../../agent/protocol.js';
import { busiestThread, loadWindow, type Window } from './load-window.js';
import { appCallers, relativeFile } from './culprit.js';
import { windowGrowth } from './growth-series.js';

type OutgoingEntry = NonNullable<GrowthMessage['outgoing']>[number];

export interface OutgoingWait {
  api: string;
  origin: string;
  /** Requests started in the window. */
  started: number;
  /** Completed requests in the window and the time they waited, ms. */
  completed: number;
  totalMs: number;
  /** node:http: answered requests that went out on a new connection; client sockets: commands that were the first on theirs. */
  newConnections?: number;
  /** Client sockets: the app frames that connected the first socket opened on the request path, nearest first. */
  connectedAt?: CallSite[];
  /** node:http only: calls left in their agent's queue, and the time from the calls to their sockets, ms. */
  queued?: number;
  socketWaitMs?: number;
  /** node:http only: the agent's socket limit, when finite. */
  maxSockets?: number;
  /** Time in the window (ms) spent with 0, 1, 2... of the site's calls in flight (the last level: that many or more). */
  concurrencyMs?: number[];
  site?: CallSite;
  /** The app function that called `site`'s. */
  caller?: CallSite;
  /** The app functions further up the stack that led to `caller`, nearest first. */
  through?: CallSite[];
}

/** What the agent totals for every kind of wait (outgoing HTTP calls, client-socket commands), cumulative. */
export interface CumulativeWaits {
  count: number;
  completed: number;
  totalMs: number;
  concurrencyMs?: number[];
  site?: CallSite;
  stack?: CallSite[];
}

/** The window's calls and wait: `e`'s totals minus those of the report before the window. */
export function callCounts(e: CumulativeWaits, prev: CumulativeWaits | undefined): Pick<OutgoingWait, 'started' | 'completed' | 'totalMs'> {
  return {
    started: e.count - (prev?.count ?? 0),
    completed: e.completed - (prev?.completed ?? 0),
    totalMs: e.totalMs - (prev?.totalMs ?? 0),
  };
}

/** The window's concurrency levels and the app frames that made the calls (site, its caller, the path above). */
export function callPlaces(
  e: CumulativeWaits,
  prev: CumulativeWaits | undefined,
): Pick<OutgoingWait, 'concurrencyMs' | 'site' | 'caller' | 'through'> {
  const [site, caller, ...through] = appCallers(e);
  return {
    ...(e.concurrencyMs ? { concurrencyMs: e.concurrencyMs.map((ms, i) => Math.max(0, ms - (prev?.concurrencyMs?.[i] ?? 0))) } : {}),
    ...(site ? { site } : {}),
    ...(caller ? { caller } : {}),
    ...(through.length > 0 ? { through } : {}),
  };
}

const key = (e: OutgoingEntry) => `${e.api} ${e.origin} ${e.site?.file ?? ''}:${e.site?.line ?? 0}:${e.site?.column ?? 0}`;

/** Cumulative totals turned into the window's (last report minus the last one before it), longest wait first. */
export function outgoingWaits(thread: ThreadTelemetry, w: Window | null): OutgoingWait[] {
  const bounds = windowGrowth(thread, w);
  if (!bounds) return [];
  const { before, end } = bounds;
  return (end.outgoing ?? [])
    .map((e) => {
      const prev = before?.outgoing?.find((p) => key(p) === key(e));
      const since = (field: 'newConnections' | 'queued' | 'socketWaitMs') =>
        e[field] !== undefined ? { [field]: e[field] - (prev?.[field] ?? 0) } : {};
      return {
        api: e.api,
        origin: e.origin,
        ...callCounts(e, prev),
        ...since('newConnections'),
        ...since('queued'),
        ...since('socketWaitMs'),
        ...(e.maxSockets !== undefined ? { maxSockets: e.maxSockets } : {}),
        ...callPlaces(e, prev),
      };
    })
    .filter((x) => x.completed > 0)
    .sort((a, b) => b.totalMs - a.totalMs);
}

/**
 * The call (site and origin) that made at least `minShare` of the calls started in `calls`: the
 * client sockets connected with no app frame on the stack (undici's, a pool's) are its
 * (handle-leak and outgoing-churn, HANDLE_LEAK_CLIENT_SITE_SHARE).
 */
export function mainClientCall(calls: readonly OutgoingWait[], minShare: number): OutgoingWait | undefined {
  const total = calls.reduce((a, c) => a + c.started, 0);
  const top = [...calls].sort((a, b) => b.started - a.started)[0];
  return top !== undefined && total > 0 && top.started >= minShare * total ? top : undefined;
}

export interface ConcurrencyBand {
  /** Calls in flight, time-weighted mean over the site's time. */
  mean: number;
  /** Share of the time with at least one call in flight. */
  busyShare: number;
  /** 10th and 90th percentile of the calls in flight over the busy time. */
  p10: number;
  p90: number;
}

/** How many of a site's calls were in flight over time, from its time per level; undefined without any. */
export function concurrencyBand(levelMs: readonly number[] | undefined): ConcurrencyBand | undefined {
  if (!levelMs) return undefined;
  const total = levelMs.reduce((a, x) => a + x, 0);
  const busy = total - (levelMs[0] ?? 0);
  if (total <= 0 || busy <= 0) return undefined;
  const mean = levelMs.reduce((a, x, level) => a + x * level, 0) / total;
  const at = (q: number): number => {
    let seen = 0;
    for (let level = 1; level < levelMs.length; level++) {
      seen += levelMs[level];
      if (seen >= q * busy) return level;
    }
    return levelMs.length - 1;
  };
  return { mean, busyShare: busy / total, p10: at(0.1), p90: at(0.9) };
}

/**
 * The outgoing calls an app function made over the window, itself or through a helper it
 * called (the site's or its caller's function and file): what a CPU culprit's HTTP client work
 * was for. The api and origin are those of the most calls.
 */
export function callsFrom(run: RunData, fn: Culprit): { api: string; origin: string; completed: number; totalMs: number } | undefined {
  const w = loadWindow(run);
  const thread = busiestThread(run, w);
  if (!thread) return undefined;
  const is = (f: CallSite | undefined) => f !== undefined && f.function === fn.function && relativeFile(f.file, run.cwd) === fn.file;
  const mine = outgoingWaits(thread, w)
    .filter((c) => is(c.site) || is(c.caller))
    .sort((a, b) => b.completed - a.completed);
  if (mine.length === 0) return undefined;
  return {
    api: mine[0].api,
    origin: mine[0].origin,
    completed: mine.reduce((a, c) => a + c.completed, 0),
    totalMs: mine.reduce((a, c) => a + c.totalMs, 0),
  };
}
