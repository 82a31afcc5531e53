// Latency creep: server latency rising with time under constant load, when no growth
// analyzer (listeners, routes, timers, heap) explains it. If CPU per request rises too, the
// work per request is growing (category handler-growth), and the culprit is the function
// whose CPU per request grew most between the first and last third of the run (two windows
// of the same CPU profile). Otherwise the wait is growing (category io-wait).

import type { RunData } from '../run-dir/run-data.js';
import type { Culprit, Finding } from './finding.js';
import { latencyTrend, creepShare, type LatencyTrend } from './signals/latency-trend.js';
import { cpuViewOf, treeOf } from './signals/cpu-profile.js';
import { busiestThread, loadWindow } from './signals/load-window.js';
import { requestSeries, requestsAt } from './signals/request-series.js';
import { frameCulprit } from './signals/culprit.js';
import { hotspots } from '../profile/hotspots.js';
import { round } from './signals/stats.js';
import { listenerLeak } from './listener-leak.js';
import { handlerGrowth } from './handler-growth.js';
import { timerLeak } from './timer-leak.js';
import { memoryLeak } from './memory-leak.js';
import { workGrowthAdvice } from './handler-growth.advice.js';
import { ioWaitAdvice } from './io-wait.advice.js';

/** CPU per request must rise by this factor for the creep to be "more work per request". */
export const CREEP_CPU_GROWTH_RATIO = 1.3;

export function latencyCreep(run: RunData): Finding[] {
  const trend = latencyTrend(run);
  if (!trend?.creeping) return [];
  const explained = [listenerLeak, handlerGrowth, timerLeak, memoryLeak].some((a) => a(run).length > 0);
  if (explained) return [];
  const cpuGrows = trend.cpuPerRequestEarlyMs > 0 && trend.cpuPerRequestLateMs / trend.cpuPerRequestEarlyMs >= CREEP_CPU_GROWTH_RATIO;
  const grower = cpuGrows ? growingFunction(run) : undefined;
  return [finding(trend, cpuGrows, grower)];
}

interface Grower {
  culprit: Culprit;
  earlyMsPerRequest: number;
  lateMsPerRequest: number;
}

/** The app function whose attributed CPU per request grew the most from the first to the last third. */
function growingFunction(run: RunData): Grower | undefined {
  const view = cpuViewOf(run);
  const w = loadWindow(run);
  const thread = busiestThread(run, w);
  if (!view || !w || !thread) return undefined;
  const third = w.durationMs / 3;
  const series = requestSeries(thread);
  const perRequest = (a: number, b: number) => {
    const requests = Math.max(1, requestsAt(series, b) - requestsAt(series, a));
    const tree = treeOf(run, view.profile, view.ref, a, b);
    return new Map(hotspots(tree, { limit: 100, kinds: ['app'] }).map((h) => [`${h.file}:${h.line}:${h.function}`, { h, ms: h.selfMs / requests }]));
  };
  const early = perRequest(w.start, w.start + third);
  const late = perRequest(w.end - third, w.end);
  let best: Grower | undefined;
  let bestDelta = 0;
  for (const [key, l] of late) {
    const e = early.get(key)?.ms ?? 0;
    if (l.ms - e > bestDelta) {
      bestDelta = l.ms - e;
      best = { culprit: frameCulprit(view.tree.frames[l.h.frame] ?? { name: l.h.function, file: l.h.file, line: l.h.line, column: 0, kind: 'app' }, run.cwd), earlyMsPerRequest: e, lateMsPerRequest: l.ms };
    }
  }
  return best;
}

function finding(trend: LatencyTrend, cpuGrows: boolean, grower: Grower | undefined): Finding {
  const work = cpuGrows
    ? ` CPU per request rose too, from ${trend.cpuPerRequestEarlyMs} to ${trend.cpuPerRequestLateMs} ms: each request does more work as the run goes on.`
    : ' CPU per request stayed flat: requests wait longer, they do not compute more.';
  const who = grower
    ? ` \`${grower.culprit.function}\` (${grower.culprit.file}:${grower.culprit.line}) went from ${round(grower.earlyMsPerRequest, 3)} to ${round(grower.lateMsPerRequest, 3)} ms of CPU per request.`
    : '';
  return {
    code: 'HOTPATH_LATENCY_CREEP',
    category: cpuGrows ? 'handler-growth' : 'io-wait',
    severity: 'warning',
    title: 'Latency keeps rising under constant load',
    summary: `Server latency p50 rose from ${trend.earlyMs} ms to ${trend.lateMs} ms during the run (${trend.slopeMsPerS} ms per second, R² ${trend.r2}).${work}${who}`,
    evidence: {
      latencyEarlyMs: trend.earlyMs, latencyLateMs: trend.lateMs, latencySlopeMsPerS: trend.slopeMsPerS, latencyTrendR2: trend.r2,
      cpuPerRequestEarlyMs: trend.cpuPerRequestEarlyMs, cpuPerRequestLateMs: trend.cpuPerRequestLateMs,
      ...(grower ? { culpritEarlyMsPerRequest: round(grower.earlyMsPerRequest, 4), culpritLateMsPerRequest: round(grower.lateMsPerRequest, 4) } : {}),
    },
    ...(grower ? { culprit: grower.culprit } : {}),
    recommendation: cpuGrows ? workGrowthAdvice : ioWaitAdvice(undefined),
    impact: creepShare(trend),
  };
}

