// Outgoing connection churn: the target's own HTTP requests to an upstream (node:http, seen by
// the agent's outgoing-calls hook) that go out on a new connection almost every time: an
// `agent: false` option, a `new http.Agent()` without keepAlive, or an upstream answering
// `Connection: close`. Each call then pays a TCP (and TLS) handshake before it is sent and
// leaves a socket in TIME_WAIT. Culprit: the app code that makes the calls. Also database and
// cache clients connected per request (the socket-waits hook: commands that were the first on
// their socket), culprit where the sockets are connected. fetch (undici) connects from its own
// dispatcher, which the outgoing-calls hook does not see: its new connections are the sockets the
// handle hook saw connected with no app frame on the stack, charged to the fetch call site that made
// nearly all of the window's client calls (as handle-leak charges such sockets).

import type { RunData, ThreadTelemetry } from '../run-dir/run-data.js';
import type { GrowthMessage } from '../agent/protocol.js';
import type { Finding } from './finding.js';
import { buildFinding } from './build-finding.js';
import { loadWindow, targetThreads, windowRequests, type Window } from './signals/load-window.js';
import { mainClientCall, outgoingWaits, type OutgoingWait } from './signals/outgoing-waits.js';
import { appCallers, describeCulprit, frameCulprit, relativeFile, siteCulprit } from './signals/culprit.js';
import type { Culprit } from './finding.js';
import { cpuViewOf } from './signals/cpu-view.js';
import { callersOfWork } from '../profile/work-breakdown.js';
import { loopStats } from './signals/loop-stats.js';
import { round } from './signals/stats.js';
import { CHURN_COST_SHARE, CHURN_MIN_CONNECTIONS_PER_REQUEST, CHURN_MIN_REQUESTS, callsToSelf } from './connection-churn.js';
import { driverChurnAdvice, fetchChurnAdvice, outgoingChurnAdvice } from './connection-churn.advice.js';
import { protocolOf, socketWaits } from './signals/socket-waits.js';
import { windowGrowth } from './signals/growth-series.js';
import { HANDLE_LEAK_CLIENT_SITE_SHARE } from './handle-leak.js';

type Churning = OutgoingWait & { newConnections: number };

export function outgoingChurn(run: RunData): Finding[] {
  const w = loadWindow(run);
  // Requests served from outside: calls the target made to its own servers are not among them.
  const inbound = Math.max(0, (loopStats(run)?.requests ?? 0) - callsToSelf(run, w).requests);
  const threads = targetThreads(run);
  const waits = threads.map((t) => outgoingWaits(t, w));
  const http = threads
    .flatMap((t, i) => [...waits[i], ...fetchConnections(t, w, waits[i])])
    .filter(
      (c): c is Churning =>
        c.newConnections !== undefined &&
        c.completed >= CHURN_MIN_REQUESTS &&
        c.newConnections / c.completed >= CHURN_MIN_CONNECTIONS_PER_REQUEST,
    );
  // A database or cache client made per request (a new ORM client, `net.connect` per query): its
  // commands are judged per request served, since one connection may carry a few of them.
  // Each thread's commands against the requests it served, of which the inbound share (a cluster
  // worker's connections are its own requests', not all workers').
  const served = threads.map((t) => windowRequests(t, w));
  const all = served.reduce((a, n) => a + n, 0);
  const sockets = threads
    .flatMap((t, i) => socketWaits(t, w).map((c) => ({ c, requests: all > 0 ? (served[i] * inbound) / all : 0 })))
    .filter(
      (x): x is { c: Churning; requests: number } =>
        x.c.newConnections !== undefined &&
        x.c.completed >= CHURN_MIN_REQUESTS &&
        x.requests > 0 &&
        x.c.newConnections / x.requests >= CHURN_MIN_CONNECTIONS_PER_REQUEST,
    );
  // Calls whose stack showed no app frame (a client library issuing them from a promise continuation)
  // are named from the CPU profile, unless a site seen elsewhere already made calls.
  const seen = waits.flat().flatMap((c) => (c.site ? [c.site] : []));
  const fromProfile = http.some((c) => !c.site) ? profileCaller(run, seen) : undefined;
  return [
    ...http.map((c) => finding(run, c, inbound, c.site ? undefined : fromProfile)),
    ...sockets.map((x) => socketFinding(run, x.c, x.requests)),
  ];
}

/**
 * A thread's fetch calls with the connections undici opened for them: the sockets connected in the
 * window with no app frame on the stack (undici's dispatcher), charged to the one fetch call site
 * that made at least HANDLE_LEAK_CLIENT_SITE_SHARE of the window's HTTP client calls; at most one
 * per call. None when node:http calls share the origin's traffic (their sockets have app frames,
 * but a share below the bar leaves the unowned sockets unexplained).
 */
export function fetchConnections(
  thread: ThreadTelemetry,
  w: Window | null,
  calls: readonly OutgoingWait[] = outgoingWaits(thread, w),
): (OutgoingWait & { newConnections: number })[] {
  const top = mainClientCall(calls, HANDLE_LEAK_CLIENT_SITE_SHARE);
  if (top?.api !== 'fetch' || top.newConnections !== undefined) return [];
  const bounds = windowGrowth(thread, w);
  const unowned = (h: NonNullable<GrowthMessage['handles']>[number]) => h.resource === 'TCPSocketWrap' && appCallers(h).length === 0;
  const created = (m: GrowthMessage | undefined) => (m?.handles ?? []).filter(unowned).reduce((a, h) => a + h.created, 0);
  if (!bounds) return [];
  // Counted from the process's start when no report came before the window, as the calls are.
  const connected = Math.max(0, created(bounds.end) - created(bounds.before));
  return [{ ...top, newConnections: Math.min(connected, top.completed) }];
}

/**
 * The share of the HTTP client work charged to app functions that one of them must carry to be
 * named for calls the agent saw with no app frame on their stack: axios builds its request in
 * the function that calls it, then issues it from a promise continuation (probe round z: an
 * Express 5 route calling axios with a `keepAlive: false` agent, 4,781 calls, none with an app
 * frame; the route's helper carried all the HTTP client work an app function was charged with).
 * Over half: the one function that makes the calls, not one of several.
 */
export const CHURN_PROFILE_CALLER_MIN_SHARE = 0.5;

/**
 * The app function the CPU profile charges most HTTP client work to (a client library's own code
 * included: work-kind's httpClientPackages), when it carries CHURN_PROFILE_CALLER_MIN_SHARE of
 * what app functions were charged and is no site the agent saw making other calls.
 */
export function profileCaller(run: RunData, seen: readonly { function: string; file: string }[]): Culprit | undefined {
  const view = cpuViewOf(run);
  if (!view) return undefined;
  const app = callersOfWork(view.tree, 'http-client').filter((c) => view.tree.frames[c.frame].kind === 'app');
  const total = app.reduce((a, c) => a + c.us, 0);
  const top = app[0];
  if (top === undefined || total <= 0 || top.us / total < CHURN_PROFILE_CALLER_MIN_SHARE) return undefined;
  const culprit = frameCulprit(view.tree.frames[top.frame], run.cwd);
  const known = seen.some((s) => s.function === culprit.function && relativeFile(s.file, run.cwd) === culprit.file);
  return known ? undefined : culprit;
}

function finding(run: RunData, c: Churning, inbound: number, fromProfile?: Culprit): Finding {
  const share = c.newConnections / c.completed;
  const culprit = c.site ? siteCulprit(c.site, run.cwd) : fromProfile;
  const tls = c.origin.startsWith('https:');
  const perRequest = inbound > 0 ? c.completed / inbound : undefined;
  const fetch = c.api === 'fetch';
  return buildFinding({
    code: 'HOTPATH_OUTGOING_CONNECTION_CHURN',
    category: 'connection-churn',
    severity: 'warning',
    title: `Requests to ${c.origin} open a new connection almost every time`,
    summary:
      `${c.newConnections} of the ${c.completed} ${fetch ? 'fetch calls' : 'HTTP requests'} to ${c.origin}${culprit ? ` from ${describeCulprit(culprit)}` : ''} ` +
      `went out on a new connection (${round(share * 100, 0)} %)${perRequest !== undefined ? `, ${round(perRequest, 2)} per request served` : ''}: ` +
      `each paid a TCP${tls ? ' and TLS' : ''} handshake before it was sent and left a socket in TIME_WAIT.` +
      (fetch
        ? ' fetch keeps a connection for the next call only once the response body has been read to the end or cancelled: ' +
          'a body left unread holds its connection until the Response is garbage-collected, so the next call connects again.'
        : '') +
      (fromProfile && culprit === fromProfile
        ? ` The calls' stacks showed no app frame (a client library issued them later, from a promise): ${describeCulprit(fromProfile)} is the app function the CPU profile charges with the HTTP client work.`
        : ''),
    evidence: {
      origin: c.origin,
      calls: c.completed,
      newConnections: c.newConnections,
      newConnectionShare: round(share, 3),
      perCallMs: round(c.totalMs / c.completed, 2),
      ...(perRequest !== undefined ? { callsPerRequest: round(perRequest, 3) } : {}),
      ...(fetch ? { api: 'fetch' } : {}),
    },
    culprit,
    recommendation: fetch ? fetchChurnAdvice : outgoingChurnAdvice(tls),
    impact: Math.min(1, share * Math.min(1, perRequest ?? 1) * CHURN_COST_SHARE),
  });
}

/**
 * Commands on client sockets connected on the request path: the culprit is where the sockets are
 * connected (the client's connect, called from the code that makes a client per request), else
 * the code that writes the commands.
 */
function socketFinding(run: RunData, c: Churning, requests: number): Finding {
  const perRequest = c.newConnections / requests;
  const [connect, maker] = (c.connectedAt ?? []).map((f) => siteCulprit(f, run.cwd));
  const writer = c.site ? siteCulprit(c.site, run.cwd) : undefined;
  const culprit = connect ?? writer;
  const protocol = protocolOf(c.origin);
  const remote = protocol ? `${protocol} at ${c.origin}` : c.origin;
  const where = connect
    ? ` The sockets are connected in ${describeCulprit(connect)}${maker ? `, called from ${describeCulprit(maker)}` : ''}.`
    : '';
  return buildFinding({
    code: 'HOTPATH_OUTGOING_CONNECTION_CHURN',
    category: 'connection-churn',
    severity: 'warning',
    title: `Requests open a new connection to ${remote}`,
    summary:
      `Commands written to ${remote}${writer ? ` from ${describeCulprit(writer)}` : ''} went out on sockets connected for them: ` +
      `${c.newConnections} new connections for ${c.completed} commands, ${round(perRequest, 2)} per request served. Each paid a TCP handshake (and the ` +
      `server's session setup) before its first command and left a socket in TIME_WAIT.${where}`,
    evidence: {
      origin: c.origin,
      ...(protocol ? { protocol } : {}),
      commands: c.completed,
      newConnections: c.newConnections,
      connectionsPerRequest: round(perRequest, 3),
      perCommandMs: round(c.totalMs / c.completed, 2),
      ...(connect ? { connectedIn: connect } : {}),
      ...(maker ? { connectCaller: maker } : {}),
    },
    culprit,
    recommendation: driverChurnAdvice,
    impact: Math.min(1, Math.min(1, perRequest) * CHURN_COST_SHARE),
  });
}
