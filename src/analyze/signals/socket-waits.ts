// Commands the app wrote on its own client sockets on the request path (the agent's socket-waits
// hook: database and cache drivers on long-lived connections), as totals over the load window
// per remote and call site, told like outgoing HTTP calls (api 'socket', the remote as origin):
// each is a wait from the write to its answer. The protocol is guessed from the port for a
// friendlier name only.

import type { ThreadTelemetry } from '../../run-dir/run-data.js';
import type { GrowthMessage } from '../../agent/protocol.js';
import { windowSamples, type Window } from './load-window.js';
import { windowGrowth } from './growth-series.js';
import { callCounts, callPlaces, type OutgoingWait } from './outgoing-waits.js';
import { appCallers } from './culprit.js';

type SocketEntry = NonNullable<GrowthMessage['socketWaits']>[number];

/** Well-known ports of the servers apps talk to over one long-lived connection. */
const PROTOCOLS: Record<number, string> = {
  6379: 'Redis',
  5432: 'Postgres',
  3306: 'MySQL',
  11211: 'memcached',
  27017: 'MongoDB',
  9042: 'Cassandra',
  5672: 'AMQP',
  4222: 'NATS',
};

/** The protocol a remote's port suggests ('Redis' for :6379), when well known. */
export function protocolOf(remote: string): string | undefined {
  const m = /:(\d+)$/.exec(remote);
  return m ? PROTOCOLS[Number(m[1])] : undefined;
}

/** The reports socketWaits subtracts: the last before the window and the last within it. */
function socketReports(thread: ThreadTelemetry, w: Window | null): { before?: GrowthMessage; end: GrowthMessage } | undefined {
  const bounds = windowGrowth(thread, w);
  if (!bounds) return undefined;
  const { before } = bounds;
  const inside = w ? thread.growth.findLast((m) => m.t <= w.end && m.t > (before?.t ?? w.start) && m.socketWaits !== undefined) : undefined;
  return { ...(before ? { before } : {}), end: inside ?? bounds.end };
}

/**
 * The share of the thread's window requests served within the span the reports cover (after the
 * report before the window, up to the last report within it); 1 without requests to weigh.
 */
function spanShare(thread: ThreadTelemetry, w: Window | null, reports: { before?: GrowthMessage; end: GrowthMessage }): number {
  const from = reports.before?.t ?? -Infinity;
  const to = reports.end.t;
  let window = 0;
  let span = 0;
  for (const s of windowSamples(thread, w)) {
    const n = s.http?.finished ?? 0;
    const mid = s.t - s.intervalMs / 2;
    window += n;
    if (mid > from && mid <= to) span += n;
  }
  return window > 0 && span > 0 ? Math.min(1, span / window) : 1;
}

const key = (e: SocketEntry) => `${e.remote} ${e.site?.file ?? ''}:${e.site?.line ?? 0}:${e.site?.column ?? 0}`;

/**
 * Cumulative totals turned into the window's (the last report within it minus the last one before
 * it), longest wait first. Not the report after the window, unlike other growth: the requests still
 * in flight when the load stops get their answers while the agent stops its profile and collects
 * the heap, and those waits (hundreds of ms each, seen at 350) would weigh on the mean. Reports go
 * out once a second, so the last within the window can come up to a second before its end: the
 * figures are then scaled to the whole window by the share of the window's requests served in the
 * span they cover (a 4 s load's commands counted over its first 3 s, judged against the requests
 * of 4 s, read 0.75 connections per request where each request opened one, and 1.6 commands per
 * request where each sent two).
 */
export function socketWaits(thread: ThreadTelemetry, w: Window | null): OutgoingWait[] {
  const reports = socketReports(thread, w);
  if (!reports) return [];
  const { before, end } = reports;
  const share = spanShare(thread, w, reports);
  const scaled = (n: number): number => (share < 1 ? Math.round(n / share) : n);
  return (end.socketWaits ?? [])
    .map((e): OutgoingWait => {
      const prev = before?.socketWaits?.find((p) => key(p) === key(e));
      const connectedAt = e.connectStack ? appCallers({ stack: e.connectStack }) : [];
      const counts = callCounts(e, prev);
      const places = callPlaces(e, prev);
      return {
        api: 'socket',
        origin: e.remote,
        started: scaled(counts.started),
        completed: scaled(counts.completed),
        totalMs: counts.totalMs / share,
        ...(e.newConnections !== undefined ? { newConnections: scaled(e.newConnections - (prev?.newConnections ?? 0)) } : {}),
        ...(connectedAt.length > 0 ? { connectedAt } : {}),
        ...places,
        ...(places.concurrencyMs ? { concurrencyMs: places.concurrencyMs.map((ms) => ms / share) } : {}),
      };
    })
    .filter((x) => x.completed > 0)
    .sort((a, b) => b.totalMs - a.totalMs);
}
