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
  return {
    code: 'HOTPATH_TIMER_LEAK',
    category: 'timer-leak',
    severity: t.kind === 'interval' || trend?.creeping ? 'critical' : 'warning',
    title: `${fn} timers pile up without being cleared`,
    summary: `${t.pending} ${fn} timers from one site are pending (${t.created} created, ${t.cleared} cleared, ${t.fired} fired)${s && s.perRequest > 0 ? `, ${round(s.perRequest, 2)} more per request` : ''}.${where}`,
    evidence: {
      kind: t.kind, pending: t.pending, created: t.created, cleared: t.cleared, fired: t.fired,
      ...(s ? { perRequest: s.perRequest, perSecond: s.perSecond, requestCorrelation: s.requestCorrelation } : {}),
      ...trendEvidence(trend),
    },
    ...(culprit ? { culprit } : {}),
    recommendation: timerLeakAdvice(t.kind),
    impact: Math.max(creepShare(trend), TIMER_LEAK_BASE_IMPACT),
  };
}
