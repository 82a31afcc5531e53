// Timer leak: timers created on the request path and never cleared, so pending timers (and
// the closures they hold) pile up with the traffic; or loops that re-arm a timer each time it
// fires (`await sleep()` in a loop or a recursion, started per request), whose pending count
// climbs while most timers fire. Culprit: the creation site; for a sleep (a timer that resolves
// a promise) the app function that awaits it.

import type { RunData, ThreadTelemetry } from '../run-dir/run-data.js';
import type { GrowthMessage } from '../agent/protocol.js';
import type { Culprit, Finding } from './finding.js';
import { buildFinding, growthSeverity } from './build-finding.js';
import { inFlightPeak, loadWindow, targetThreads } from './signals/load-window.js';
import { growthStats, lastGrowth, lateGrowthShare } from './signals/growth-series.js';
import { appCallers, isAppSite, siteCulprit } from './signals/culprit.js';
import { latencyTrend } from './signals/latency-trend.js';
import { timerLeakAdvice } from './timer-leak.advice.js';
import { round } from './signals/stats.js';

/** Pending timeouts from one site before they count: a timeout per in-flight request is normal. */
export const TIMER_LEAK_MIN_PENDING = 200;
/** Intervals never end on their own: a handful of uncleared ones from one site is already a leak. */
export const TIMER_LEAK_MIN_PENDING_INTERVALS = 10;
/** Pending count must grow steadily with traffic or time (Pearson r). */
export const TIMER_LEAK_MIN_CORRELATION = 0.8;
/** Share of created timers that stay pending: most of them are never cleared nor fired. */
export const TIMER_LEAK_MIN_PENDING_SHARE = 0.5;
export const TIMER_LEAK_BASE_IMPACT = 0.05;
/** This many pending timeouts from one site hold as many closures (and what they captured): critical. */
export const TIMER_LEAK_CRITICAL_PENDING = 10_000;
/** Timeouts asking for this long (mean, ms) expire entries later (a session TTL), not the request: a sweep is the fix. */
export const TIMER_LEAK_EXPIRY_MS = 60_000;
/**
 * A loop that re-arms its timer keeps one pending and fires the rest (a per-request poller had
 * 22 % of its timers pending): below TIMER_LEAK_MIN_PENDING_SHARE, the pending count must still
 * climb in the second half of the window by this share of its rise (timeouts that fire reach
 * rate × delay and stay there)...
 */
export const TIMER_LEAK_MIN_LATE_SHARE = 0.25;
/** ...and end at this many times the most requests in flight (a timer per request in flight is a wait, not a leak). */
export const TIMER_LEAK_MIN_IN_FLIGHT_RATIO = 2;

/**
 * A site whose pending count, reported once the load was over, fell under this share of its peak
 * during the load was draining: its timers fire, late. A loop lagging behind its timers (a busy
 * machine, or another site's leak swamping the timers phase) leaves due timers pending and their
 * count climbing with the lag: one timeout per request, 500 ms each, read 2,060 pending at the
 * end of the load and 696 half a second later, while the leaking re-arm loops beside it went on
 * climbing. Leaked timers never drain.
 */
export const TIMER_LEAK_DRAINED_SHARE = 0.5;

type TimerEntry = GrowthMessage['timers'][number];

const siteKey = (t: TimerEntry) => (t.site ? `${t.kind} ${t.site.file}:${t.site.line}:${t.site.column}` : `${t.kind} ?`);

export function timerLeak(run: RunData): Finding[] {
  const trend = latencyTrend(run);
  return targetThreads(run).flatMap((thread) => {
    const last = lastGrowth(thread);
    if (!last) return [];
    return last.timers
      .map((t) => ({ t, leak: leakKind(run, thread, t) }))
      .filter((x): x is { t: TimerEntry; leak: 'pending' | 'rearm' } => x.leak !== undefined)
      .map(({ t, leak }) => finding(run, thread, t, trend, leak === 'rearm'));
  });
}

function pendingStats(thread: ThreadTelemetry, t: TimerEntry) {
  const key = siteKey(t);
  return growthStats(thread, (m) => m.timers.find((x) => siteKey(x) === key)?.pending);
}

/**
 * 'pending': most timers from the site are still pending and their count grows; 'rearm': fewer
 * are (each fires and a new one replaces it), but the pending count keeps climbing well past the
 * requests in flight.
 */
function leakKind(run: RunData, thread: ThreadTelemetry, t: TimerEntry): 'pending' | 'rearm' | undefined {
  const min = t.kind === 'interval' ? TIMER_LEAK_MIN_PENDING_INTERVALS : TIMER_LEAK_MIN_PENDING;
  if (t.pending < min || t.created === 0) return undefined;
  const s = pendingStats(thread, t);
  if (s === undefined || s.delta <= 0 || Math.max(s.requestCorrelation, s.timeCorrelation) < TIMER_LEAK_MIN_CORRELATION) return undefined;
  const w = loadWindow(run);
  const key = siteKey(t);
  if (drained(thread, (m) => m.timers.find((x) => siteKey(x) === key)?.pending, w)) return undefined;
  if (t.pending / t.created >= TIMER_LEAK_MIN_PENDING_SHARE) return 'pending';
  const late = lateGrowthShare(thread, (m) => m.timers.find((x) => siteKey(x) === key)?.pending, w);
  const rearms =
    s.delta >= min && late >= TIMER_LEAK_MIN_LATE_SHARE && t.pending >= TIMER_LEAK_MIN_IN_FLIGHT_RATIO * inFlightPeak(thread, w);
  return rearms ? 'rearm' : undefined;
}

/** Whether the last report after the load shows the count fallen under TIMER_LEAK_DRAINED_SHARE of its peak during the load. */
function drained(thread: ThreadTelemetry, pending: (m: GrowthMessage) => number | undefined, w: ReturnType<typeof loadWindow>): boolean {
  if (!w) return false;
  const last = thread.growth.at(-1);
  const after = last && last.t > w.end ? pending(last) : undefined;
  const peak = Math.max(0, ...thread.growth.filter((m) => m.t >= w.start && m.t <= w.end).map((m) => pending(m) ?? 0));
  return after !== undefined && peak > 0 && after < TIMER_LEAK_DRAINED_SHARE * peak;
}

/**
 * The creation site when it is the app's. A timer that is awaited is the awaiting code's: for a
 * sleep the app wrote (`new Promise((r) => setTimeout(r, ms))` in a helper), the app function
 * that called the helper, where the loop or the wait is; for a library's sleep or a
 * timers/promises timer made in a library, the first app function above it.
 */
function culpritOf(t: TimerEntry, cwd: string): { culprit?: Culprit; helper?: Culprit; library?: Culprit } {
  const awaited = t.awaited === true || t.promise === true;
  if (!isAppSite(t.site)) {
    const app = appCallers(t)[0];
    if (!app) return {};
    // A library that makes a timer per call (a cache's TTL timer per entry) does it where the app
    // calls it: that call is what the app can change (another option, one entry per request less).
    return awaited || !t.site ? { culprit: siteCulprit(app, cwd) } : { culprit: siteCulprit(app, cwd), library: siteCulprit(t.site, cwd) };
  }
  const callers = appCallers(t);
  if (t.awaited === true && callers.length > 1) return { culprit: siteCulprit(callers[1], cwd), helper: siteCulprit(callers[0], cwd) };
  return { culprit: siteCulprit(t.site, cwd) };
}

function finding(run: RunData, thread: ThreadTelemetry, t: TimerEntry, trend: ReturnType<typeof latencyTrend>, rearm: boolean): Finding {
  const s = pendingStats(thread, t);
  const { culprit, helper, library } = culpritOf(t, run.cwd);
  const fn = `${t.promise ? 'timers/promises ' : ''}${t.kind === 'interval' ? 'setInterval' : 'setTimeout'}`;
  const via = helper ?? library;
  const through = via ? ` through \`${via.function}\` (${via.file}:${via.line}${library ? ', a dependency' : ''})` : '';
  const where = culprit
    ? ` ${helper ? 'Awaited by' : 'Created by'} \`${culprit.function}\` at ${culprit.file}:${culprit.line}${through}.`
    : '';
  const loop = rearm
    ? ' Each one that fires is replaced by a new one: a loop that re-arms its timer, started again and again, and never stopped.'
    : '';
  const meanDelayMs = t.delayMs !== undefined && t.created > 0 ? t.delayMs / t.created : undefined;
  const expiry = t.kind === 'timeout' && meanDelayMs !== undefined && meanDelayMs >= TIMER_LEAK_EXPIRY_MS;
  const delayText = meanDelayMs !== undefined && t.kind === 'timeout' ? ` Each asks for ${describeDelay(meanDelayMs)}.` : '';
  return buildFinding({
    code: 'HOTPATH_TIMER_LEAK',
    category: 'timer-leak',
    severity: growthSeverity(t.kind === 'interval' || t.pending >= TIMER_LEAK_CRITICAL_PENDING, trend),
    title: rearm ? `${fn} loops that re-arm their timer pile up` : `${fn} timers pile up without being cleared`,
    summary: `${t.pending} ${fn} timers from one site are pending (${t.created} created, ${t.cleared} cleared, ${t.fired} fired)${s && s.perRequest > 0 ? `, ${round(s.perRequest, 2)} more per request` : ''}.${delayText}${loop}${where}`,
    evidence: {
      kind: t.kind,
      pending: t.pending,
      created: t.created,
      cleared: t.cleared,
      fired: t.fired,
      ...(rearm ? { rearmed: true } : {}),
      ...(t.promise ? { promise: true } : {}),
      ...(via ? { through: via } : {}),
      ...(meanDelayMs !== undefined ? { meanDelayMs: round(meanDelayMs, 0) } : {}),
      ...(s ? { perRequest: s.perRequest, perSecond: s.perSecond, requestCorrelation: s.requestCorrelation } : {}),
    },
    culprit,
    recommendation: timerLeakAdvice(rearm ? 'rearm' : expiry ? 'expiry' : t.kind),
    growth: { trend, baseImpact: TIMER_LEAK_BASE_IMPACT },
  });
}

/** "30 min", "45 s", "250 ms". */
function describeDelay(ms: number): string {
  if (ms >= 120_000) return `${round(ms / 60_000, 0)} min`;
  if (ms >= 2_000) return `${round(ms / 1000, 0)} s`;
  return `${round(ms, 0)} ms`;
}
