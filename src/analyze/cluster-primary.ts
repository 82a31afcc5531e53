// The cluster primary as a bottleneck: under round-robin scheduling (Node's default except on
// Windows) the primary accepts every connection and hands it to a worker over IPC
// (node:internal/cluster/round_robin_handle), so its CPU, loop and the sockets it holds grow
// with the rate of NEW connections. From the primary's own stream (`primary` messages): its
// cost per connection, how each figure followed the connection rate, and the headroom, the
// rate at which it would use a whole core, against the run's.

import type { RunData } from '../run-dir/run-data.js';
import type { Culprit, Finding, Severity } from './finding.js';
import { buildFinding } from './build-finding.js';
import { fitLine, primaryLoad, primaryThreads, type Fit, type PrimaryLoad } from './signals/cluster-primary-load.js';
import { workerSpread, type WorkerSpread } from './signals/worker-spread.js';
import { loadWindow, targetThreads, windowSamples } from './signals/load-window.js';
import { round, sum } from './signals/stats.js';
import { relativeFile, isAppSite } from './signals/culprit.js';
import { clusterPrimaryAdvice } from './cluster-primary.advice.js';

/** Connections handed to workers in the window before a cost per connection means anything. */
export const PRIMARY_MIN_HANDOFFS = 200;
/** Share of one core the primary must use for its cost to be worth a finding. */
export const PRIMARY_MIN_CORE_SHARE = 0.02;
/** Below this headroom (saturation rate / run rate) the primary falls over before the rate doubles: critical. */
export const PRIMARY_CRITICAL_HEADROOM = 2;
/** Below this headroom: a warning; above it the primary is fine at this load (info). */
export const PRIMARY_WARNING_HEADROOM = 4;
/** A fit over the run's points is quoted only with this many points and this much spread in rate (max / min). */
export const PRIMARY_FIT_MIN_POINTS = 3;
export const PRIMARY_FIT_MIN_RATE_SPREAD = 1.2;

/** Node's distribution path, the culprit (no line: node's internals differ by version). */
export const DISTRIBUTION_PATH: Culprit = {
  function: 'RoundRobinHandle.distribute',
  file: 'node:internal/cluster/round_robin_handle',
  line: 0,
};

const SCHED_NAMES: Record<number, string> = { 1: 'none', 2: 'rr' };

export function clusterPrimary(run: RunData): Finding[] {
  const out: Finding[] = [];
  for (const thread of primaryThreads(run)) {
    const load = primaryLoad(run, thread);
    if (load === undefined || load.handedOff < PRIMARY_MIN_HANDOFFS || load.coreShare < PRIMARY_MIN_CORE_SHARE) continue;
    out.push(finding(run, load));
  }
  return out;
}

function headroomVerdict(headroom: number): { severity: Severity; verdict: string } {
  if (headroom < PRIMARY_CRITICAL_HEADROOM) return { severity: 'critical', verdict: `falls over before ${round(headroom, 1)}x this rate` };
  if (headroom < PRIMARY_WARNING_HEADROOM)
    return { severity: 'warning', verdict: `close: it falls over at about ${round(headroom, 1)}x this rate` };
  return { severity: 'info', verdict: `fine at this load (about ${round(headroom, 1)}x this rate before it falls over)` };
}

/** How each figure followed the connection rate over the run's points (per 1,000 connections/s). */
function scaling(load: PrimaryLoad): Record<string, unknown> {
  const rates = load.points.map((p) => p.rate);
  const lo = Math.min(...rates);
  const hi = Math.max(...rates);
  const base = { points: load.points.length, rateMin: round(lo, 0), rateMax: round(hi, 0) };
  if (load.points.length < PRIMARY_FIT_MIN_POINTS || lo <= 0 || hi / lo < PRIMARY_FIT_MIN_RATE_SPREAD) {
    return { ...base, note: "the connection rate hardly varied: the cost per connection assumes the primary's work grows in proportion" };
  }
  // Growth per 1,000 connections/s of one figure of the points, with its correlation.
  const per1k = (figure: (p: (typeof load.points)[number]) => number, digits: number) => {
    const f: Fit | undefined = fitLine(rates, load.points.map(figure));
    return f ? { per1000PerS: round(f.slope * 1000, digits), r: round(f.r, 2) } : undefined;
  };
  return {
    ...base,
    coreShare: per1k((p) => p.coreShare, 3),
    elu: per1k((p) => p.elu, 3),
    loopDelayP99Ms: per1k((p) => p.delayP99Ms, 1),
    heldSockets: per1k((p) => p.heldSockets, 1),
  };
}

/** The workers' CPU over the window, µs: the primary's share of the cluster's CPU is the impact. */
function workersCpuUs(run: RunData): number {
  const w = loadWindow(run);
  return sum(
    targetThreads(run)
      .flatMap((t) => windowSamples(t, w))
      .map((s) => s.cpu.user + s.cpu.system),
  );
}

function spreadEvidence(spread: WorkerSpread | undefined): Record<string, unknown> {
  if (spread === undefined) return {};
  return { requestsPerWorker: Object.fromEntries(spread.workers.map((w) => [String(w.workerId), w.requests])) };
}

function finding(run: RunData, load: PrimaryLoad): Finding {
  // Rounded once, so the title's figure is the evidence's rounded again (86.49 would read 86 beside 86.5).
  const perConnUs = round(load.cpuUs / load.handedOff, 1);
  const saturation = 1e6 / perConnUs;
  const headroom = saturation / load.rate;
  const { severity, verdict } = headroomVerdict(headroom);
  const site = load.forkSite?.find((s) => isAppSite(s));
  const forkSite = site ? `${relativeFile(site.file, run.cwd)}:${site.line}` : undefined;
  const sched = load.schedulingPolicy !== undefined ? (SCHED_NAMES[load.schedulingPolicy] ?? String(load.schedulingPolicy)) : undefined;
  const workersCpu = workersCpuUs(run);
  const spread = workerSpread(run);
  const held = load.heldPeak > 0 ? `, up to ${load.heldPeak} accepted sockets held waiting for a worker` : '';
  return buildFinding({
    code: 'HOTPATH_CLUSTER_PRIMARY',
    category: 'connection-churn',
    severity,
    title: `The cluster primary spends ${round(perConnUs, 0)} µs of CPU per connection handing it to a worker`,
    summary:
      `Under round-robin scheduling the cluster primary (pid ${load.pid}) accepted every connection and handed it to one of ` +
      `${load.workers} workers over IPC: ${round(load.rate, 0)} connections/s cost it ${round(load.coreShare * 100, 0)} % of a core ` +
      `(${round(perConnUs, 0)} µs each), loop utilization ${round(load.eluMean, 2)}, loop delay p99 ${round(load.delayP99Ms, 1)} ms${held}. ` +
      `At that cost it saturates a core at about ${Math.round(saturation / 100) * 100} connections/s: ${verdict}. ` +
      `The work is Node's distribution path (node:internal/cluster/round_robin_handle)${forkSite ? `, for the workers forked at ${forkSite}` : ''}.`,
    evidence: {
      role: 'cluster-primary',
      pid: load.pid,
      connectionsHandedOff: load.handedOff,
      connectionsPerSecond: round(load.rate, 1),
      cpuPerConnectionUs: round(perConnUs, 1),
      coreShare: round(load.coreShare, 3),
      eluMean: round(load.eluMean, 3),
      loopDelayP99Ms: round(load.delayP99Ms, 1),
      loopDelayMaxMs: round(load.delayMaxMs, 1),
      heldSocketsMean: round(load.heldMean, 1),
      heldSocketsPeak: load.heldPeak,
      heapUsedStartBytes: load.heapUsedStart,
      heapUsedPeakBytes: load.heapUsedPeak,
      heapUsedEndBytes: load.heapUsedEnd,
      saturationConnectionsPerSecond: round(saturation, 0),
      headroom: round(headroom, 2),
      verdict,
      scaling: scaling(load),
      ...(load.refused > 0 ? { handOffsRefused: load.refused } : {}),
      workers: load.workers,
      ...(sched !== undefined ? { schedulingPolicy: sched } : {}),
      handedOffPerWorker: load.perWorker,
      ...spreadEvidence(spread),
      distributionPath: 'node:internal/cluster/round_robin_handle',
      ...(forkSite !== undefined ? { forkSite } : {}),
    },
    culprit: DISTRIBUTION_PATH,
    recommendation: clusterPrimaryAdvice(undefined, run.meta.target?.pid !== undefined ? run.meta.command : undefined),
    impact: load.cpuUs / Math.max(1, load.cpuUs + workersCpu),
  });
}
