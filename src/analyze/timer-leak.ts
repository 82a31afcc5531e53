// Timer leak: timers created on the request path and never cleared, so pending timers (and
// the closures they hold) pile up with the traffic. Culprit: the creation site.

import type { RunData, ThreadTelemetry } from '../run-dir/run-data.js';
import type { GrowthMessage } from '../agent/protocol.js';
import type { Finding } from './finding.js';
import { targetThreads } from './signals/load-window.js';
import { growthStats, lastGrowth } from './signals/growth-series.js';
import { isAppSite, siteCulprit } from './signals/culprit.js';
import { creepShare, latencyTrend, trendEvidence } from './signals/latency-trend.js';
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

type TimerEntry = GrowthMessage['timers'][number];

const siteKey = (t: TimerEntry) => (t.site ? `${t.kind} ${t.site.file}:${t.site.line}:${t.site.column}` : `${t.kind} ?`);

export function timerLeak(run: RunData): Finding[] {
  const trend = latencyTrend(run);
  return targetThreads(run).flatMap((thread) => {
    const last = lastGrowth(thread);
    if (!last) return [];
    return last.timers.filter((t) => isLeak(thread, t)).map((t) => finding(run, thread, t, trend));
  });
}

function pendingStats(thread: ThreadTelemetry, t: TimerEntry) {
  const key = siteKey(t);
  return growthStats(thread, (m) => m.timers.find((x) => siteKey(x) === key)?.pending);
}

function isLeak(thread: ThreadTelemetry, t: TimerEntry): boolean {
  const min = t.kind === 'interval' ? TIMER_LEAK_MIN_PENDING_INTERVALS : TIMER_LEAK_MIN_PENDING;
  if (t.pending < min || t.created === 0 || t.pending / t.created < TIMER_LEAK_MIN_PENDING_SHARE) return false;
  const s = pendingStats(thread, t);
  return s !== undefined && s.delta > 0 && Math.max(s.requestCorrelation, s.timeCorrelation) >= TIMER_LEAK_MIN_CORRELATION;
}

function finding(run: RunData, thread: ThreadTelemetry, t: TimerEntry, trend: ReturnType<typeof latencyTrend>): Finding {
  const s = pendingStats(thread, t);
  const culprit = isAppSite(t.site) ? siteCulprit(t.site, run.cwd) : undefined;
  const fn = t.kind === 'interval' ? 'setInterval' : 'setTimeout';
  const where = culprit ? ` Created by \`${culprit.function}\` at ${culprit.file}:${culprit.line}.` : '';
  const meanDelayMs = t.delayMs !== undefined && t.created > 0 ? t.delayMs / t.created : undefined;
  const expiry = t.kind === 'timeout' && meanDelayMs !== undefined && meanDelayMs >= TIMER_LEAK_EXPIRY_MS;
  const delayText = meanDelayMs !== undefined && t.kind === 'timeout' ? ` Each asks for ${describeDelay(meanDelayMs)}.` : '';
  return {
    code: 'HOTPATH_TIMER_LEAK',
    category: 'timer-leak',
    severity: t.kind === 'interval' || trend?.creeping || t.pending >= TIMER_LEAK_CRITICAL_PENDING ? 'critical' : 'warning',
    title: `${fn} timers pile up without being cleared`,
    summary: `${t.pending} ${fn} timers from one site are pending (${t.created} created, ${t.cleared} cleared, ${t.fired} fired)${s && s.perRequest > 0 ? `, ${round(s.perRequest, 2)} more per request` : ''}.${delayText}${where}`,
    evidence: {
      kind: t.kind, pending: t.pending, created: t.created, cleared: t.cleared, fired: t.fired,
      ...(meanDelayMs !== undefined ? { meanDelayMs: round(meanDelayMs, 0) } : {}),
      ...(s ? { perRequest: s.perRequest, perSecond: s.perSecond, requestCorrelation: s.requestCorrelation } : {}),
      ...trendEvidence(trend),
    },
    ...(culprit ? { culprit } : {}),
    recommendation: timerLeakAdvice(expiry ? 'expiry' : t.kind),
    impact: Math.max(creepShare(trend), TIMER_LEAK_BASE_IMPACT),
  };
}

/** "30 min", "45 s", "250 ms". */
function describeDelay(ms: number): string {
  if (ms >= 120_000) return `${round(ms / 60_000, 0)} min`;
  if (ms >= 2_000) return `${round(ms / 1000, 0)} s`;
  return `${round(ms, 0)} ms`;
}
