// Unanswered requests: some requests never get a response while the others are answered
// quickly, so the clients' timeouts are not slowness but a code path that neither responds nor
// passes the request on (a missing `res.end()` or `next()`, a promise that never settles, an
// error swallowed before the reply). A server that is merely slow times requests out too; then
// its answered requests are slow as well, and the other detectors explain it.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { loopStats } from './signals/loop-stats.js';
import { loadWindow, targetThreads, windowSamples } from './signals/load-window.js';
import { round } from './signals/stats.js';
import { hungCallAdvice, socketsHeldAdvice, unansweredAdvice } from './unanswered-requests.advice.js';
import { lastGrowth } from './signals/growth-series.js';
import { appCallers, describeCulprit, siteCulprit } from './signals/culprit.js';
import type { GrowthMessage } from '../agent/protocol.js';
import { unansweredRoute } from './signals/unanswered-route.js';
import { dropSentence, droppedThrows } from './signals/dropped-throws.js';

/** Timed-out requests worth a finding, and their share of what was sent. */
export const UNANSWERED_MIN_REQUESTS = 3;
export const UNANSWERED_MIN_SHARE = 0.001;
/** Critical from this share: one request in a hundred left hanging. */
export const UNANSWERED_CRITICAL_SHARE = 0.01;
/**
 * The answered requests' p99 must stay under this fraction of the client timeout: then the
 * timeouts are not the tail of a slow server.
 */
export const UNANSWERED_MAX_P99_OF_TIMEOUT = 0.25;

/** Closed model: the seconds at the end with no completion that show every connection stuck. */
export const STUCK_MIN_SILENT_SECONDS = 2;
/** ...while the target's loop was this idle (a blocked loop is a stall, not a hang). */
export const STUCK_MAX_ELU = 0.5;
/**
 * Outgoing calls still waiting for a response at the end, from one call site, that explain the
 * hang: at least this share of the hung requests (each hung request waits on its call).
 */
export const UNANSWERED_CALLS_MIN_SHARE = 0.5;

export function unansweredRequests(run: RunData): Finding[] {
  const load = run.load;
  if (!load) return [];
  const stuck = stuckConnections(run, load) ?? hungAtEnd(run, load);
  if (stuck) return [stuck];
  const timeouts = load.errors.timeouts;
  const sent = Math.max(load.requests.sent, load.requests.total + timeouts);
  if (timeouts < UNANSWERED_MIN_REQUESTS || sent === 0 || timeouts / sent < UNANSWERED_MIN_SHARE) return [];
  // Server-side p99 of the answered requests when the agent saw them, else the client's p50 (its tail holds the timeouts).
  const answeredP99 = loopStats(run)?.latencyP99Ms ?? load.latency.p50;
  if (answeredP99 >= load.options.timeoutMs * UNANSWERED_MAX_P99_OF_TIMEOUT) return [];
  const share = timeouts / sent;
  return [
    unanswered(
      run,
      timeouts,
      share >= UNANSWERED_CRITICAL_SHARE ? 'critical' : 'warning',
      Math.min(1, share * 10),
      `${timeouts} of ${sent} requests (${round(share * 100, 2)} %) timed out after ${load.options.timeoutMs} ms, ` +
        `while the answered ones took ${round(answeredP99, 1)} ms at p99: they were left hanging, not slow.`,
      { timeouts, sent, unansweredShare: round(share, 4), timeoutMs: load.options.timeoutMs, answeredP99Ms: round(answeredP99, 2) },
    ),
  ];
}

type Load = NonNullable<RunData['load']>;

/**
 * The finding, with the request that was sent when every request was the same one, and the
 * outgoing calls the hung requests wait on when the agent saw them left without a response.
 */
function unanswered(
  run: RunData,
  hung: number,
  severity: Finding['severity'],
  impact: number,
  summary: string,
  evidence: Finding['evidence'],
): Finding {
  const load = run.load as Load;
  const request = load.options.scenario === undefined ? `${load.options.method} ${pathOf(load.url)}` : undefined;
  const calls = pendingCalls(run);
  const waitsOn = calls && calls.pending >= Math.max(UNANSWERED_MIN_REQUESTS, hung * UNANSWERED_CALLS_MIN_SHARE) ? calls : undefined;
  const site = waitsOn ? appCallers(waitsOn.entry)[0] : undefined;
  // Where the hung requests went: the route and the last app function that took them (the agent
  // noted them as their connections closed), when no outgoing call explains the wait.
  const route = unansweredRoute(run);
  // Where they were dropped, when an error was thrown about once per request left unanswered.
  const drop = waitsOn ? undefined : droppedThrows(run);
  // A catch of the app's that took the error names where they were dropped; an error nothing in the
  // app handled names the function it left, unless the route's handler is known (it let it through).
  const dropped = drop && (drop.caughtInStack || route?.culprit === undefined || route.entry.listener === true) ? drop.culprit : undefined;
  const culprit = site ? siteCulprit(site, run.cwd) : (dropped ?? route?.culprit);
  const routeText = (route && !waitsOn ? routeSentence(route, drop === undefined) : '') + (drop ? dropSentence(drop) : '');
  const queued = waitsOn?.entry.queued !== undefined && waitsOn.entry.queued >= waitsOn.pending * UNANSWERED_CALLS_MIN_SHARE;
  const callsText = waitsOn
    ? ` ${waitsOn.pending} outgoing ${waitsOn.entry.api === 'fetch' ? 'fetch' : 'HTTP'} calls to ${waitsOn.entry.origin}${culprit ? ` made by ${describeCulprit(culprit)}` : ''} ` +
      `were still waiting for a response at the end (${waitsOn.entry.completed} of ${waitsOn.entry.count} answered): the hung requests wait on them` +
      (queued
        ? `, queued in their http.Agent${waitsOn.entry.maxSockets !== undefined ? ` behind its ${waitsOn.entry.maxSockets} sockets` : ''}, which never came free.`
        : '.')
    : '';
  return {
    code: 'HOTPATH_UNANSWERED_REQUESTS',
    category: 'unanswered-requests',
    severity,
    title: waitsOn
      ? 'Some requests never get a response: they wait on outgoing calls that never end'
      : 'Some requests never get a response',
    summary: `${summary}${callsText}${routeText}${request !== undefined ? ` Every request was \`${request}\`.` : ''}`,
    evidence: {
      ...evidence,
      ...(request !== undefined ? { request } : {}),
      ...(route
        ? {
            unansweredRoute: `${route.entry.method} ${route.entry.route}`,
            routeUnanswered: route.entry.count,
            unansweredSeen: route.total,
            ...(route.window !== undefined ? { unansweredWindow: route.window } : {}),
            ...(route.extraOnRoute !== undefined ? { routeUnansweredAfterLoad: route.extraOnRoute } : {}),
            ...(route.entry.oldestMs !== undefined ? { oldestWaitMs: route.entry.oldestMs } : {}),
            ...(route.entry.handler ? { handler: route.entry.handler.name || '(anonymous)' } : {}),
            ...(route.entry.handlerKind ? { handlerKind: route.entry.handlerKind } : {}),
            ...(route.via ? { calledFrom: `${route.via.function} (${route.via.file}:${route.via.line})` } : {}),
          }
        : {}),
      ...(drop
        ? {
            droppedAt: `${drop.culprit.function} (${drop.culprit.file}:${drop.culprit.line})`,
            thrownAt: `${drop.thrownAt.function} (${drop.thrownAt.file}:${drop.thrownAt.line})`,
            ...(drop.handledAt ? { handledAt: `${drop.handledAt.function} (${drop.handledAt.file}:${drop.handledAt.line})` } : {}),
            caughtInStack: drop.caughtInStack,
            throwsAfterLoad: drop.count,
            unansweredAfterLoad: drop.unanswered,
          }
        : {}),
      ...(waitsOn
        ? {
            pendingCalls: waitsOn.pending,
            callsOrigin: waitsOn.entry.origin,
            ...(queued
              ? {
                  queuedCalls: waitsOn.entry.queued,
                  ...(waitsOn.entry.maxSockets !== undefined ? { maxSockets: waitsOn.entry.maxSockets } : {}),
                }
              : {}),
          }
        : {}),
    },
    ...(culprit ? { culprit } : {}),
    recommendation: waitsOn ? `${queued ? socketsHeldAdvice : hungCallAdvice}\n\n${unansweredAdvice}` : unansweredAdvice,
    impact,
  };
}

/**
 * " 10 of them were `GET /profile` (an Express route), last handled by loadProfile (server.js:5), which ...":
 * each request counted once, in the load it came from (the extra load's told when `withExtra`).
 */
function routeSentence(route: NonNullable<ReturnType<typeof unansweredRoute>>, withExtra: boolean): string {
  const e = route.entry;
  const what = `\`${e.method} ${e.route}\`${e.pattern ? " (a route of the app's router)" : ''}`;
  const who = route.culprit
    ? route.via
      ? `, taken by the server's request listener ${describeCulprit(route.via)} and handed to ${describeCulprit(route.culprit)}`
      : `, last handled by ${e.listener ? "the server's request listener " : `its ${e.handlerKind ?? 'handler'} `}${describeCulprit(route.culprit)}`
    : e.handler && e.handler.name !== ''
      ? `, last handled by \`${e.handler.name}\``
      : '';
  const left =
    route.window === 'measured'
      ? 'the measured load left waiting'
      : route.window === 'extra'
        ? 'a little more load after it (not measured) left waiting'
        : 'the server left waiting';
  const share = route.total > e.count ? `${e.count} of the ${route.total} requests ${left}` : `The ${e.count} requests ${left}`;
  const extra =
    withExtra && route.extraOnRoute !== undefined ? ` (and ${route.extraOnRoute} more of a little more load after it, not measured)` : '';
  return ` ${share} were ${what}${extra}${who}: a path through it neither responds nor passes the request on.`;
}

type OutgoingEntry = NonNullable<GrowthMessage['outgoing']>[number];

/** The outgoing call site with the most calls still waiting for a response at the last growth report. */
function pendingCalls(run: RunData): { entry: OutgoingEntry; pending: number } | undefined {
  let best: { entry: OutgoingEntry; pending: number } | undefined;
  for (const t of targetThreads(run)) {
    for (const entry of lastGrowth(t)?.outgoing ?? []) {
      const pending = entry.count - entry.completed;
      if (pending > 0 && (best === undefined || pending > best.pending)) best = { entry, pending };
    }
  }
  return best;
}

/**
 * Hung requests shorter runs see before any times out: in a closed model each one holds its
 * connection until the timeout, so once every connection holds one, completions stop while the
 * server's loop sits idle, and the requests are still in flight when the load ends.
 */
function stuckConnections(run: RunData, load: Load): Finding | undefined {
  if (load.model !== 'closed' || run.meta.outcome.status !== 'completed') return undefined;
  const seconds = load.timeline.map((p) => p.requests);
  let silent = 0;
  while (silent < seconds.length && seconds[seconds.length - 1 - silent] === 0) silent++;
  const answered = seconds.slice(0, seconds.length - silent);
  const waiting = load.requests.inFlightAtEnd;
  // `answered` ends on a second with completions (the silent ones were taken off its end).
  if (silent < STUCK_MIN_SILENT_SECONDS || answered.length === 0 || waiting < UNANSWERED_MIN_REQUESTS) return undefined;
  const tailBusy = busyAtEnd(run, silent * 1000);
  if (tailBusy !== undefined && tailBusy > STUCK_MAX_ELU) return undefined;
  return unanswered(
    run,
    waiting,
    'critical',
    1,
    `Responses stopped after ${answered.length} s: the last ${silent} s answered no request while ${waiting} of ${load.options.connections} connections ` +
      `waited for one until the load ended${tailBusy !== undefined ? `, and the server's event loop was idle (${round(tailBusy * 100, 0)} % busy)` : ''}. ` +
      `Requests were left hanging, one per connection, until none was left to send on.`,
    {
      answeredSeconds: answered.length,
      silentSeconds: silent,
      waitingAtEnd: waiting,
      connections: load.options.connections,
      answered: load.requests.total,
      ...(tailBusy !== undefined ? { tailBusy: round(tailBusy, 3) } : {}),
    },
  );
}

/**
 * How busy the target's loop was over the last `ms` of the window: ELU, or the CPU the process
 * used when that is lower (libuv loses the idle time of a wait a signal interrupts, so ELU reads
 * high while a CPU profile runs); undefined without samples there.
 */
function busyAtEnd(run: RunData, ms: number): number | undefined {
  const w = loadWindow(run);
  const tail = targetThreads(run)
    .flatMap((t) => windowSamples(t, w))
    .filter((x) => w === null || x.t >= w.end - ms);
  const busy = (x: (typeof tail)[number]) => Math.min(x.elu, (x.cpu.user + x.cpu.system) / 1000 / Math.max(1, x.intervalMs));
  return tail.length > 0 ? tail.reduce((a, x) => a + busy(x), 0) / tail.length : undefined;
}

/**
 * The oldest request still waiting when the load ended must have waited this many times the
 * answered requests' p99 (and STUCK_MIN_OLDEST_MS) for the waiting ones to be hung, not slow.
 */
export const STUCK_OLDEST_P99_RATIO = 20;
export const STUCK_MIN_OLDEST_MS = 1000;

/**
 * Hung requests a run ended on before they could stop the responses (STUCK_MIN_SILENT_SECONDS):
 * on a slower machine the same hung branch takes longer to catch every connection (a limiter
 * leaving one request in 260 unanswered caught the last of 20 connections after ~5,200 requests,
 * at the end of a 5 s run at 1,000 req/s). The agent saw the requests still waiting when their
 * connections closed, the oldest for far longer than any answered request took, on a loop that
 * sat idle: the wait is a ratio to the answered requests' latency, which the machine's speed
 * moves alike.
 */
function hungAtEnd(run: RunData, load: Load): Finding | undefined {
  if (load.model !== 'closed' || run.meta.outcome.status !== 'completed') return undefined;
  const waiting = load.requests.inFlightAtEnd;
  const route = unansweredRoute(run);
  const oldestMs = route?.entry.oldestMs;
  const answeredP99 = loopStats(run)?.latencyP99Ms;
  if (
    waiting < UNANSWERED_MIN_REQUESTS ||
    route === undefined ||
    route.total < UNANSWERED_MIN_REQUESTS ||
    oldestMs === undefined ||
    answeredP99 === undefined
  )
    return undefined;
  if (oldestMs < Math.max(STUCK_MIN_OLDEST_MS, STUCK_OLDEST_P99_RATIO * answeredP99)) return undefined;
  const tailBusy = busyAtEnd(run, STUCK_MIN_OLDEST_MS);
  if (tailBusy !== undefined && tailBusy > STUCK_MAX_ELU) return undefined;
  return unanswered(
    run,
    waiting,
    'critical',
    1,
    `${waiting} of ${load.options.connections} connections still waited for a response when the load ended, the oldest request for ` +
      `${round(oldestMs / 1000, 1)} s, ${round(oldestMs / Math.max(answeredP99, 1e-3), 0)} times the answered requests' p99 (${round(answeredP99, 1)} ms)` +
      `${tailBusy !== undefined ? `, on an event loop ${round(tailBusy * 100, 0)} % busy` : ''}: they were left hanging, not slow.`,
    {
      waitingAtEnd: waiting,
      connections: load.options.connections,
      answered: load.requests.total,
      oldestWaitMs: oldestMs,
      answeredP99Ms: round(answeredP99, 2),
      ...(tailBusy !== undefined ? { tailBusy: round(tailBusy, 3) } : {}),
    },
  );
}

function pathOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  } catch {
    return url;
  }
}
