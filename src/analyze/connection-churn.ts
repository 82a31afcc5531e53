// Connection churn: connections opened per request, keep-alive refused or cut short, and a
// keepAliveTimeout shorter than the client's idle time (open-model runs, where each connection
// waits between requests). New connections cost a handshake, an accept and socket setup each.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { buildFinding } from './build-finding.js';
import { loadWindow, targetThreads, windowSamples, type Window } from './signals/load-window.js';
import { outgoingWaits } from './signals/outgoing-waits.js';
import { round, sum } from './signals/stats.js';
import { appCloseAdvice, clientChurnAdvice, keepAliveTimeoutAdvice, serverChurnAdvice } from './connection-churn.advice.js';
import type { ThreadTelemetry } from '../run-dir/run-data.js';
import type { CallSite, ListenMessage } from '../agent/protocol.js';
import { describeCulprit, isAppSite, siteCulprit } from './signals/culprit.js';
import { lastGrowth } from './signals/growth-series.js';

/** Connections per request worth a finding: at least every other request opens one. */
export const CHURN_MIN_CONNECTIONS_PER_REQUEST = 0.5;
/** Requests needed before a ratio means anything. */
export const CHURN_MIN_REQUESTS = 100;
/**
 * A server that itself cuts the connections its clients keep alive (`maxRequestsPerSocket`, a
 * keepAliveTimeout shorter than the client's turnaround) churns below the rule above: one new
 * connection per 3 requests (hapi with maxRequestsPerSocket 3) is still a handshake, an accept
 * and a socket setup for a third of the requests. Said from one new connection per 5 requests,
 * when the server closed nearly all the connections the clients opened (a kept-alive run closes
 * almost none before the load ends).
 */
export const CHURN_SERVER_CUT_MIN_CONNECTIONS_PER_REQUEST = 0.2;
export const CHURN_SERVER_CUT_CLOSED_SHARE = 0.9;
/** A keepAliveTimeout below this (ms) is short enough to cut a client's turnaround between two requests. */
export const CHURN_SHORT_KEEPALIVE_MS = 100;
/** Estimated share of a small request's cost that a new connection adds on top (accept, socket setup, close). */
export const CHURN_COST_SHARE = 0.3;

interface ChurnFigures {
  requests: number;
  connections: number;
  perRequest: number;
  requestsPerClosedConnection?: number;
  keepAliveTimeout?: number;
  clientKeepalive?: boolean;
  closedByServer?: number;
  /** Responses after which the app closed a connection the client asked to keep, and where it set the header. */
  closedByApp?: number;
  closeSite?: CallSite;
  /** Open model: how long each client connection sits idle between requests, ms. */
  clientIdleMs?: number;
  /** The connections the load engine was asked to keep open. */
  clientConnections?: number;
  maxRequestsPerSocket?: number;
}

export function connectionChurn(run: RunData): Finding[] {
  const f = figures(run);
  if (!f) return [];
  const churn = f.requests >= CHURN_MIN_REQUESTS && f.perRequest >= CHURN_MIN_CONNECTIONS_PER_REQUEST;
  // The idle time is an estimate (connections / rate: an open-model engine that reuses the first
  // free connection leaves most idle longer and one busy), so a timeout below it is said only when
  // connections were in fact cut: the server closed some, or the clients had to open more than
  // they started with.
  const cutShort =
    f.clientIdleMs !== undefined &&
    f.keepAliveTimeout !== undefined &&
    f.keepAliveTimeout > 0 &&
    f.keepAliveTimeout < f.clientIdleMs &&
    ((f.closedByServer ?? 0) > 0 || (f.clientConnections !== undefined && f.connections > f.clientConnections));
  const serverCut = cutByServer(f);
  if (!churn && !cutShort && !serverCut) return [];
  return [finding(run, f, cutShort, churn || serverCut)];
}

/** The server closed nearly every keep-alive connection the clients opened, often enough to cost (see CHURN_SERVER_CUT_*). */
function cutByServer(f: ChurnFigures): boolean {
  return (
    f.clientKeepalive === true &&
    f.requests >= CHURN_MIN_REQUESTS &&
    f.perRequest >= CHURN_SERVER_CUT_MIN_CONNECTIONS_PER_REQUEST &&
    (f.closedByServer ?? 0) >= CHURN_SERVER_CUT_CLOSED_SHARE * f.connections
  );
}

/** The server settings that close connections by themselves, as said in the finding. */
function serverSettings(f: ChurnFigures): string[] {
  const out: string[] = [];
  if (f.maxRequestsPerSocket !== undefined) {
    out.push(`its \`maxRequestsPerSocket\` is ${f.maxRequestsPerSocket} (node closes a connection after that many requests)`);
  }
  if (f.keepAliveTimeout !== undefined && f.keepAliveTimeout > 0 && f.keepAliveTimeout < CHURN_SHORT_KEEPALIVE_MS) {
    out.push(`its \`keepAliveTimeout\` is ${f.keepAliveTimeout} ms (a connection idle that long between two requests is closed)`);
  }
  return out;
}

function figures(run: RunData): ChurnFigures | undefined {
  const w = loadWindow(run);
  const threads = targetThreads(run);
  const http = threads
    .flatMap((t) => windowSamples(t, w))
    .map((s) => s.http)
    .filter((h) => h !== undefined);
  const driven = drivenListen(run, threads)?.server;
  const keepAliveTimeout = driven?.keepAliveTimeout;
  const maxRequestsPerSocket = driven?.maxRequestsPerSocket;
  const load = run.load;
  // The target's calls to its own servers are counted there as requests and connections too.
  const self = callsToSelf(run, w);
  let requests = Math.max(0, sum(http.map((h) => h.finished)) - self.requests);
  let connections = Math.max(0, sum(http.map((h) => h.connections)) - self.connections);
  if (requests === 0 && load) {
    requests = load.requests.total;
    connections = load.connections.opened;
  }
  if (requests === 0) return undefined;
  const closed = sum(http.map((h) => h.closed));
  const perClosed = closed > 0 ? sum(http.map((h) => h.requestsPerClosedConnection * h.closed)) / closed : undefined;
  const rate = load?.model === 'open' ? load.options.rate : undefined;
  const closedByApp = sum(http.map((h) => h.closeHeader ?? 0));
  const closeSite = closeHeaderSite(threads);
  return {
    requests,
    connections,
    perRequest: connections / requests,
    ...(perClosed !== undefined ? { requestsPerClosedConnection: perClosed } : {}),
    ...(keepAliveTimeout !== undefined ? { keepAliveTimeout } : {}),
    ...(load ? { clientKeepalive: load.options.keepalive, closedByServer: load.connections.closedByServer } : {}),
    ...(rate && load ? { clientIdleMs: (load.options.connections / rate) * 1000, clientConnections: load.options.connections } : {}),
    ...(closedByApp > 0 ? { closedByApp } : {}),
    ...(closeSite ? { closeSite } : {}),
    ...(maxRequestsPerSocket !== undefined ? { maxRequestsPerSocket } : {}),
  };
}

/** Where the app set `Connection: close` most often (the agent samples it once such responses appear). */
function closeHeaderSite(threads: ThreadTelemetry[]): CallSite | undefined {
  // Growth reports are cumulative: the last one holds every site recorded.
  const rows = threads.flatMap((t) => lastGrowth(t)?.closeHeaderSites ?? []);
  return rows.filter((r) => isAppSite(r.site)).sort((a, b) => b.count - a.count)[0]?.site;
}

/** Share of the requests after which the app closed the connection for it to be the cause. */
export const CHURN_APP_CLOSE_SHARE = 0.5;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** The driven server's listen (its timeouts are the ones the load met), else the first HTTP server's. */
function drivenListen(run: RunData, threads: ThreadTelemetry[]): ListenMessage | undefined {
  const http = threads.flatMap((t) => t.listens).filter((l) => l.server?.keepAliveTimeout !== undefined);
  const port = run.meta.target?.port;
  return http.find((l) => port !== undefined && l.port === port) ?? http[0];
}

/**
 * Ports whose requests the target threads' HTTP figures hold: every port a thread listens on,
 * or only the driven one where its agent counted the servers listening elsewhere apart
 * (`http.drivenOnly`: a config service or stub the app runs in-process is not in the figures).
 */
export function countedPorts(run: RunData, w: Window | null): Set<number> {
  const driven = run.meta.target?.port;
  const ports = new Set<number>();
  for (const t of targetThreads(run)) {
    const drivenOnly = windowSamples(t, w).some((s) => s.http?.drivenOnly === true);
    for (const l of t.listens) if (l.port !== undefined && (!drivenOnly || l.port === driven)) ports.add(l.port);
  }
  return ports;
}

/**
 * node:http requests the target sent to a port whose requests its own figures count (an
 * in-process upstream, server-side rendering calling its own API): the server side counted
 * each as a request, and each that opened a connection as a connection.
 */
export function callsToSelf(run: RunData, w: Window | null): { requests: number; connections: number } {
  const threads = targetThreads(run);
  const ports = countedPorts(run, w);
  let requests = 0;
  let connections = 0;
  for (const call of threads.flatMap((t) => outgoingWaits(t, w))) {
    let url: URL;
    try {
      url = new URL(call.origin);
    } catch {
      continue;
    }
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    if (!LOOPBACK.has(url.hostname) || !ports.has(port)) continue;
    requests += call.completed;
    connections += call.newConnections ?? 0;
  }
  return { requests, connections };
}

/** What the server did to the connections the clients meant to reuse, and the settings that do it. */
function serverClosed(f: ChurnFigures): string {
  const closed =
    f.closedByServer !== undefined && f.connections > 0
      ? ` ${round(Math.min(1, f.closedByServer / f.connections) * 100, 0)} % of them`
      : '';
  const after =
    f.requestsPerClosedConnection !== undefined ? `, after ${round(f.requestsPerClosedConnection, 1)} requests each on average` : '';
  const settings = serverSettings(f);
  const why = settings.length > 0 ? `: ${settings.join(', and ')}` : '';
  return `The server closed${closed === '' ? ' connections' : closed} although the clients meant to reuse them${after}${why}.`;
}

function finding(run: RunData, f: ChurnFigures, cutShort: boolean, churn: boolean): Finding {
  const clientSide = f.clientKeepalive === false;
  const appShare = f.closedByApp !== undefined ? f.closedByApp / f.requests : 0;
  const byApp = !clientSide && churn && appShare >= CHURN_APP_CLOSE_SHARE;
  const culprit = byApp && f.closeSite ? siteCulprit(f.closeSite, run.cwd) : undefined;
  // Keep-alive cut short without churn yet (idle gaps only): the timeout is the whole fix.
  const advice = byApp
    ? [appCloseAdvice]
    : [...(churn ? [clientSide ? clientChurnAdvice : serverChurnAdvice] : []), keepAliveTimeoutAdvice(f.keepAliveTimeout)];
  const why = clientSide
    ? 'The clients did not use keep-alive.'
    : byApp
      ? `The app closed the connection after ${round(appShare * 100, 0)} % of the responses although the client asked to keep it: ` +
        `they carried \`Connection: close\`${culprit ? `, set by ${describeCulprit(culprit)}` : ''}.`
      : cutShort
        ? `The server's keepAliveTimeout (${f.keepAliveTimeout} ms) is shorter than the ${round(f.clientIdleMs ?? 0, 0)} ms each client connection sits idle, so keep-alive is cut short.`
        : serverClosed(f);
  return buildFinding({
    code: 'HOTPATH_CONNECTION_CHURN',
    category: 'connection-churn',
    severity: 'warning',
    title: byApp
      ? 'The app closes every connection (Connection: close)'
      : cutShort && !clientSide
        ? "keepAliveTimeout is shorter than the clients' idle time"
        : f.perRequest < CHURN_MIN_CONNECTIONS_PER_REQUEST
          ? 'The server closes keep-alive connections after a few requests'
          : 'A new connection for almost every request',
    summary: `${f.connections} connections were opened for ${f.requests} requests (${round(f.perRequest, 2)} per request). ${why}`,
    evidence: {
      requests: f.requests,
      connectionsOpened: f.connections,
      connectionsPerRequest: round(f.perRequest, 3),
      ...(f.requestsPerClosedConnection !== undefined ? { requestsPerClosedConnection: round(f.requestsPerClosedConnection, 2) } : {}),
      ...(f.keepAliveTimeout !== undefined ? { keepAliveTimeoutMs: f.keepAliveTimeout } : {}),
      ...(f.maxRequestsPerSocket !== undefined ? { maxRequestsPerSocket: f.maxRequestsPerSocket } : {}),
      ...(f.clientKeepalive !== undefined ? { clientKeepalive: f.clientKeepalive } : {}),
      ...(f.closedByServer !== undefined ? { closedByServer: f.closedByServer } : {}),
      ...(f.clientIdleMs !== undefined ? { clientIdleMs: round(f.clientIdleMs, 0) } : {}),
      ...(f.closedByApp !== undefined ? { closedByApp: f.closedByApp, closedByAppShare: round(appShare, 3) } : {}),
    },
    culprit,
    recommendation: advice.join('\n\n'),
    impact: Math.min(1, f.perRequest) * CHURN_COST_SHARE,
  });
}
