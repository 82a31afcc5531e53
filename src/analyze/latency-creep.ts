// Latency creep: server latency rising with time under constant load. When a growth analyzer
// (listeners, routes, timers, heap) explains it, analyze-run drops it afterwards
// (creepExplainedByGrowth): this analyzer reads only the run. If CPU per request rises too and one
// function's share of the CPU profile's samples grows with it, the work per request is growing
// (category handler-growth), and the culprit is the function whose CPU per request grew most
// between the first and last third of the run (two windows of the same CPU profile); CPU per
// request rising alike everywhere, or without a profile to tell, is a machine slowing down, not
// growth. With CPU per request flat the wait is growing (category io-wait).

import type { RunData } from '../run-dir/run-data.js';
import type { Culprit, Finding } from './finding.js';
import { buildFinding } from './build-finding.js';
import { latencyTrend, creepShare, type LatencyTrend } from './signals/latency-trend.js';
import { cpuViewOf, treeOf } from './signals/cpu-view.js';
import { busiestThread, loadWindow } from './signals/load-window.js';
import { requestSeries, requestsAt } from './signals/request-series.js';
import { frameCulprit } from './signals/culprit.js';
import { hotspots } from '../profile/hotspots.js';
import { round } from './signals/stats.js';
import { workGrowthAdvice } from './handler-growth.advice.js';
import { ioWaitAdvice } from './io-wait.advice.js';
import { IO_WAIT_MAX_ELU } from './io-wait.js';
import { loopStats } from './signals/loop-stats.js';

/** CPU per request must rise by this factor for the creep to be "more work per request". */
export const CREEP_CPU_GROWTH_RATIO = 1.3;

export function latencyCreep(run: RunData): Finding[] {
  const trend = latencyTrend(run);
  if (!trend?.creeping) return [];
  const cpuGrows = trend.cpuPerRequestEarlyMs > 0 && trend.cpuPerRequestLateMs / trend.cpuPerRequestEarlyMs >= CREEP_CPU_GROWTH_RATIO;
  // Flat CPU per request on a busy loop means the process got less CPU (a noisy neighbour),
  // not that requests wait longer on I/O: nothing to blame in the application.
  const elu = loopStats(run)?.eluMean ?? 0;
  if (!cpuGrows && elu > IO_WAIT_MAX_ELU) return [];
  // A wait that grows in the app (an upstream, a pool, a lock) grows in the server's own timing
  // of its requests too. When most of the clients' rise is not there, the time grew outside the
  // server: in the load generator or the machine's scheduling of it. healthy-http on a 2-core
  // machine at load 21: the clients' p50 1.4 → 2.7 ms, CPU per request falling.
  if (!cpuGrows && !waitGrewInServer(trend)) return [];
  const profile = cpuGrows ? growingFunctions(run) : undefined;
  const growers = profile?.growers ?? [];
  // CPU milliseconds per request rise as much on a machine that slows down (a neighbour on the
  // cores, a throttled vCPU, the host's other guests) as with more work per request: only a
  // function's share of the profile's samples growing tells the two apart. Without a profile, or
  // with no function growing faster than the rest, there is no growth to report.
  if (cpuGrows && (!profile || !growers[0] || uniformSlowdown(profile, growers[0]))) return [];
  return [finding(trend, cpuGrows, growers)];
}

/** The server's own p50 must carry at least this share of the clients' rise for a growing wait to be the app's. */
export const CREEP_SERVER_MIN_SHARE = 0.5;

function waitGrewInServer(trend: LatencyTrend): boolean {
  const rise = trend.lateMs - trend.earlyMs;
  return trend.serverLateMs - trend.serverEarlyMs >= CREEP_SERVER_MIN_SHARE * rise;
}

/**
 * A function absent from the first third is new work only when it is the app's or a dependency's
 * code and holds at least this share of the last third's CPU per request: Node's or V8's internals
 * showing up late carry no choice of the app's (beside a CPU hog, async_hooks' pushAsyncContext
 * "grew" from nothing in a route handing its work to the thread pool), and a sliver is noise.
 */
export const CREEP_NEW_WORK_MIN_SHARE = 0.1;

function newWork(all: ProfileWindows, top: Grower): boolean {
  return (
    (top.kind === 'app' || top.kind === 'deps') &&
    all.lateMsPerRequest > 0 &&
    top.lateMsPerRequest >= CREEP_NEW_WORK_MIN_SHARE * all.lateMsPerRequest
  );
}

/** Attributed CPU per request in the first and last third of the load, from the same profile. */
export interface ProfileWindows {
  earlyMsPerRequest: number;
  lateMsPerRequest: number;
}

/**
 * Work that grows per request grows in the code that does it, not everywhere: when the function
 * that grew most grew by less than CREEP_CPU_GROWTH_RATIO times the rest of the profile's CPU per
 * request, everything slowed alike (a throttled or shared core) and no function is to blame. Both
 * sides come from the same profile's samples, so the comparison is of sample shares, which the
 * machine's speed does not change: the agent's CPU time is process time while profile samples are
 * wall-clock (a starved thread is sampled while it waits for a core), and subtracting one from the
 * other blamed a CPU-bound handler for a machine slowing down. With no rest to compare with (the
 * function holds every sample), nothing calibrates the machine's speed, and nothing is blamed.
 */
export function uniformSlowdown(all: ProfileWindows, top: Grower): boolean {
  if (top.earlyMsPerRequest <= 0) return !newWork(all, top);
  const restEarly = all.earlyMsPerRequest - top.earlyMsPerRequest;
  const restLate = all.lateMsPerRequest - top.lateMsPerRequest;
  if (restEarly <= 0 || restLate <= 0) return true;
  return top.lateMsPerRequest / top.earlyMsPerRequest < CREEP_CPU_GROWTH_RATIO * (restLate / restEarly);
}

export interface Grower {
  function: string;
  file: string;
  line: number;
  kind: string;
  culprit?: Culprit;
  earlyMsPerRequest: number;
  lateMsPerRequest: number;
  /** Share of the total growth of CPU per request this function accounts for. */
  shareOfGrowth: number;
}

/** An app function must account for this share of the CPU-per-request growth to be blamed. */
export const CREEP_CULPRIT_MIN_SHARE = 0.3;

/** Functions (attributed self time) whose CPU per request grew from the first to the last third, most first, and the windows' totals. */
function growingFunctions(run: RunData): (ProfileWindows & { growers: Grower[] }) | undefined {
  const view = cpuViewOf(run);
  const w = loadWindow(run);
  const thread = busiestThread(run, w);
  if (!view || !w || !thread) return undefined;
  const third = w.durationMs / 3;
  const series = requestSeries(thread);
  const perRequest = (a: number, b: number) => {
    const requests = Math.max(1, requestsAt(series, b) - requestsAt(series, a));
    const tree = treeOf(run, view.profile, view.ref, a, b);
    const rows = hotspots(tree, { limit: Infinity, kinds: CREEP_KINDS });
    const totalMs = rows.reduce((a, h) => a + h.selfMs, 0) / requests;
    return {
      totalMs,
      rows: new Map(
        rows.slice(0, 200).map((h) => [`${h.file}:${h.line}:${h.function}`, { h, ms: h.selfMs / requests, frame: tree.frames[h.frame] }]),
      ),
    };
  };
  const earlyWindow = perRequest(w.start, w.start + third);
  const lateWindow = perRequest(w.end - third, w.end);
  const early = earlyWindow.rows;
  const late = lateWindow.rows;
  const growth: Grower[] = [];
  for (const [key, l] of late) {
    const e = early.get(key)?.ms ?? 0;
    if (l.ms <= e) continue;
    growth.push({
      function: l.h.function,
      file: l.h.file,
      line: l.h.line,
      kind: l.h.kind,
      ...(l.h.kind === 'app' ? { culprit: frameCulprit(l.frame, run.cwd) } : {}),
      earlyMsPerRequest: e,
      lateMsPerRequest: l.ms,
      shareOfGrowth: 0,
    });
  }
  const total = growth.reduce((a, g) => a + g.lateMsPerRequest - g.earlyMsPerRequest, 0);
  for (const g of growth) g.shareOfGrowth = total > 0 ? (g.lateMsPerRequest - g.earlyMsPerRequest) / total : 0;
  return {
    earlyMsPerRequest: earlyWindow.totalMs,
    lateMsPerRequest: lateWindow.totalMs,
    growers: growth.sort((a, b) => b.shareOfGrowth - a.shareOfGrowth).slice(0, 5),
  };
}

/** The work a request pays for: every kind but idle, the program and GC. */
const CREEP_KINDS = ['app', 'deps', 'node-core', 'native', 'kernel', 'v8-builtin'] as const;

function finding(trend: LatencyTrend, cpuGrows: boolean, growers: Grower[]): Finding {
  const grower = growers.find((g) => g.culprit && g.shareOfGrowth >= CREEP_CULPRIT_MIN_SHARE && g === growers[0]);
  const elsewhere =
    !grower && growers[0]
      ? ` Most of the growth is in ${growers[0].function} (${growers[0].file || growers[0].kind}:${growers[0].line}), ${round(growers[0].shareOfGrowth * 100, 0)} % of it.`
      : '';
  const work = cpuGrows
    ? ` CPU per request rose too, from ${round(trend.cpuPerRequestEarlyMs, 2)} to ${round(trend.cpuPerRequestLateMs, 2)} ms: each request does more work as the run goes on.`
    : ' CPU per request stayed flat: requests wait longer, they do not compute more.';
  const who = grower
    ? ` \`${grower.function}\` (${grower.file}:${grower.line}) went from ${round(grower.earlyMsPerRequest, 2)} to ${round(grower.lateMsPerRequest, 2)} ms of CPU per request.`
    : elsewhere;
  return buildFinding({
    code: 'HOTPATH_LATENCY_CREEP',
    category: cpuGrows ? 'handler-growth' : 'io-wait',
    severity: 'warning',
    title: 'Latency keeps rising under constant load',
    summary: `Latency p50 rose from ${round(trend.earlyMs, 1)} ms to ${round(trend.lateMs, 1)} ms during the run (${round(trend.slopeMsPerS, 2)} ms per second, R² ${round(trend.r2, 2)}).${work}${who}`,
    evidence: {
      latencyEarlyMs: trend.earlyMs,
      latencyLateMs: trend.lateMs,
      latencySlopeMsPerS: trend.slopeMsPerS,
      latencyTrendR2: trend.r2,
      cpuPerRequestEarlyMs: trend.cpuPerRequestEarlyMs,
      cpuPerRequestLateMs: trend.cpuPerRequestLateMs,
      serverLatencyEarlyMs: trend.serverEarlyMs,
      serverLatencyLateMs: trend.serverLateMs,
      ...(growers.length > 0
        ? {
            growingFunctions: growers.map((g) => ({
              function: g.function,
              file: g.file,
              line: g.line,
              kind: g.kind,
              earlyMsPerRequest: round(g.earlyMsPerRequest, 4),
              lateMsPerRequest: round(g.lateMsPerRequest, 4),
              shareOfGrowth: round(g.shareOfGrowth, 3),
            })),
          }
        : {}),
    },
    culprit: grower?.culprit,
    recommendation: cpuGrows ? workGrowthAdvice : ioWaitAdvice(undefined),
    impact: creepShare(trend),
  });
}
