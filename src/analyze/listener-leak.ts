// Listener leak: listeners for one event on one emitter keep growing with the requests
// served. Culprit: the call site that keeps adding them. A silenced MaxListenersExceededWarning
// (setMaxListeners(0|Infinity), events.defaultMaxListeners = Infinity) is named with its site,
// when it applies to the emitter that leaks (see silencing()).

import type { RunData, ThreadTelemetry } from '../run-dir/run-data.js';
import type { GrowthMessage } from '../agent/protocol.js';
import type { Finding } from './finding.js';
import { buildFinding, growthSeverity } from './build-finding.js';
import { targetThreads } from './signals/load-window.js';
import { growthStats, lastGrowth, type GrowthStats } from './signals/growth-series.js';
import { isAppSite, relativeFile, siteCulprit } from './signals/culprit.js';
import { latencyTrend } from './signals/latency-trend.js';
import { listenerLeakAdvice, maxListenersAdvice, onceLeakAdvice } from './listener-leak.advice.js';
import { round } from './signals/stats.js';
import { loopStats } from './signals/loop-stats.js';

/** Node warns above 10 listeners per event; more than that on one emitter is already suspect. */
export const LISTENER_LEAK_MIN_COUNT = 11;
/** Listeners added during the run before it counts as growth, not setup. */
export const LISTENER_LEAK_MIN_GROWTH = 10;
/** Growth must follow the traffic or the clock closely (Pearson r). */
export const LISTENER_LEAK_MIN_CORRELATION = 0.8;
/** One listener per this many requests or more is critical: the per-request cost keeps rising. */
export const LISTENER_LEAK_CRITICAL_PER_REQUEST = 0.1;
/** Share of the growth the emitter must still hold at the end of the run (see kept()). */
export const LISTENER_LEAK_MIN_KEPT = 0.5;
/** Impact when latency does not (yet) show the cost: a leak is worth fixing but ranks low. */
export const LISTENER_LEAK_BASE_IMPACT = 0.05;

type ListenerEntry = GrowthMessage['listeners'][number];
type Disabled = GrowthMessage['maxListenersDisabled'][number];
interface Silenced {
  what: string;
  value: number | null;
  at?: string;
}

export function listenerLeak(run: RunData): Finding[] {
  const trend = latencyTrend(run);
  return targetThreads(run).flatMap((thread) => {
    const last = lastGrowth(thread);
    if (!last) return [];
    return last.listeners
      .map((entry) => ({ entry, stats: statsFor(thread, entry) }))
      .filter((x): x is { entry: ListenerEntry; stats: GrowthStats } => x.stats !== undefined && isLeak(x.entry, x.stats))
      .map(({ entry, stats }) => finding(run, last, entry, stats, addedStats(thread, entry), trend));
  });
}

function statsFor(thread: ThreadTelemetry, entry: ListenerEntry): GrowthStats | undefined {
  return growthStats(thread, (m) => m.listeners.find((l) => l.emitter === entry.emitter && l.event === entry.event)?.count);
}

/** Additions over all emitters of the class (`added`, balanced ones included once an emitter holds two), per request. */
function addedStats(thread: ThreadTelemetry, entry: ListenerEntry): GrowthStats | undefined {
  return growthStats(thread, (m) => m.listeners.find((l) => l.emitter === entry.emitter && l.event === entry.event)?.added);
}

/**
 * Listeners added per request over all the server's sockets, when the leak is on sockets: the
 * count grows on each keep-alive connection, so one socket's rate is the real one divided by
 * the open connections. The additions over all sockets bound it (they also count node's own
 * balanced per-response listeners once a socket holds two).
 */
function acrossSockets(
  run: RunData,
  entry: ListenerEntry,
  s: GrowthStats,
  all: GrowthStats | undefined,
): { perRequest: number; sockets: number } | undefined {
  if (!/Socket$/.test(entry.emitter)) return undefined;
  const sockets = loopStats(run)?.openConnectionsMean ?? 0;
  if (sockets < 2) return undefined;
  const perRequest = Math.min(s.perRequest * sockets, all?.perRequest ?? Infinity);
  return perRequest > 1.5 * s.perRequest ? { perRequest: round(perRequest, 2), sockets: Math.round(sockets) } : undefined;
}

function isLeak(entry: ListenerEntry, s: GrowthStats): boolean {
  const steady = Math.max(s.requestCorrelation, s.timeCorrelation) >= LISTENER_LEAK_MIN_CORRELATION;
  return entry.count >= LISTENER_LEAK_MIN_COUNT && s.delta >= LISTENER_LEAK_MIN_GROWTH && steady && kept(entry, s);
}

/**
 * Whether the emitter of the maximum still holds most of the growth at the last report. A leak
 * keeps its listeners; listeners that only pile up while requests are in flight (node pipes
 * each live Worker's stdout into process.stdout, a pool queues a waiter per pending call) are
 * removed again, and their maximum creeps up with each new peak of concurrency, steadily
 * enough to look like growth. Unknown (the emitter was collected, an older agent): kept.
 */
function kept(entry: ListenerEntry, s: GrowthStats): boolean {
  if (entry.current === undefined) return true;
  return entry.current - (entry.count - s.delta) >= LISTENER_LEAK_MIN_KEPT * s.delta;
}

function finding(
  run: RunData,
  last: GrowthMessage,
  entry: ListenerEntry,
  s: GrowthStats,
  all: GrowthStats | undefined,
  trend: ReturnType<typeof latencyTrend>,
): Finding {
  const culprit = isAppSite(entry.site) ? siteCulprit(entry.site, run.cwd) : undefined;
  const { silenced, known } = silencing(entry, last.maxListenersDisabled, run.cwd);
  const across = acrossSockets(run, entry, s, all);
  const perRequest = Math.max(s.perRequest, across?.perRequest ?? 0) >= LISTENER_LEAK_CRITICAL_PER_REQUEST;
  const where = culprit ? ` Added at ${culprit.file}:${culprit.line} in \`${culprit.function}\`.` : '';
  const warning =
    silenced.length > 0
      ? ` The MaxListenersExceededWarning ${known ? 'was' : 'may have been'} silenced (${silenced.map((d) => (d.at ? `${d.what} at ${d.at}` : d.what)).join('; ')}).`
      : '';
  const rate =
    across !== undefined
      ? `${round(s.perRequest, 2)} per request on that one; about ${across.perRequest} per request over the ${across.sockets} open connections`
      : s.perRequest > 0
        ? `${round(s.perRequest, 2)} per request`
        : `${round(s.perSecond, 1)} per second`;
  return buildFinding({
    code: 'HOTPATH_LISTENER_LEAK',
    category: 'listener-leak',
    severity: growthSeverity(perRequest, trend),
    title: `'${entry.event}' listeners on ${entry.emitter} grow with every request`,
    summary: `Listeners for '${entry.event}' on ${across !== undefined ? `one ${entry.emitter}` : entry.emitter} grew from ${s.first} to ${entry.count} during the run (${rate}); each one runs on every '${entry.event}' event.${where}${warning}`,
    evidence: {
      emitter: entry.emitter,
      event: entry.event,
      listeners: entry.count,
      listenersAtStart: s.first,
      added: s.delta,
      ...(entry.current !== undefined ? { listenersAtEnd: entry.current } : {}),
      ...(entry.maxListeners !== undefined ? { maxListeners: entry.maxListeners ?? Infinity } : {}),
      perRequest: s.perRequest,
      perSecond: s.perSecond,
      requestCorrelation: s.requestCorrelation,
      ...(across !== undefined ? { perRequestAllSockets: across.perRequest, openConnections: across.sockets } : {}),
      ...(silenced.length > 0 ? { maxListenersDisabled: silenced } : {}),
    },
    culprit,
    recommendation:
      (entry.once === true ? onceLeakAdvice : listenerLeakAdvice)(entry.emitter, entry.event) +
      (silenced.length > 0 ? `\n\n${maxListenersAdvice}` : ''),
    growth: { trend, baseImpact: LISTENER_LEAK_BASE_IMPACT },
  });
}

const lifts = (limit: number | null): boolean => limit === null || limit === 0;
const isDefault = (d: Disabled): boolean => d.what === 'events.defaultMaxListeners';
/** setMaxListeners on an emitter of that class (`<Class>.setMaxListeners`), or the static form, whose targets are unnamed. */
const onClass = (d: Disabled, emitter: string): boolean =>
  d.what === `${emitter}.setMaxListeners` || d.what === 'EventEmitter.setMaxListeners';

/**
 * The silencings of the MaxListenersExceededWarning that apply to the emitter that leaks. The
 * agent reports that emitter's limit now (`maxListeners`): lifted on its own (setMaxListeners on
 * it, at `maxListenersSite` when seen) or through `events.defaultMaxListeners` (which applies to
 * emitters without their own). A limit that is not lifted silenced nothing, whatever other
 * emitters did (fastify's avvio lifts its own Boot's limit; a leak on the app's emitter still
 * printed the warning). Without that reading (an older agent, the emitter collected) the
 * candidates are the default and the setMaxListeners calls on emitters of its class: `known` false.
 */
export function silencing(entry: ListenerEntry, disabled: readonly Disabled[], cwd: string): { silenced: Silenced[]; known: boolean } {
  const row = (d: { what: string; value: number | null; site?: Disabled['site'] }): Silenced => ({
    what: d.what,
    value: d.value,
    ...(d.site ? { at: `${relativeFile(d.site.file, cwd)}:${d.site.line}` } : {}),
  });
  if (entry.maxListeners === undefined) {
    return { silenced: disabled.filter((d) => isDefault(d) || onClass(d, entry.emitter)).map(row), known: false };
  }
  if (!lifts(entry.maxListeners)) return { silenced: [], known: true };
  if (entry.maxListenersOwn === false) {
    const byDefault = disabled.filter(isDefault);
    return {
      silenced: (byDefault.length > 0 ? byDefault : [{ what: 'events.defaultMaxListeners', value: entry.maxListeners }]).map(row),
      known: true,
    };
  }
  const own = `${entry.emitter}.setMaxListeners`;
  if (entry.maxListenersSite)
    return { silenced: [row({ what: own, value: entry.maxListeners, site: entry.maxListenersSite })], known: true };
  const byClass = disabled.filter((d) => onClass(d, entry.emitter));
  return { silenced: (byClass.length > 0 ? byClass : [{ what: own, value: entry.maxListeners }]).map(row), known: true };
}
