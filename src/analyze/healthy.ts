// Healthy: no warning or critical finding. Says so with the headroom measured, so "nothing
// found" is a statement backed by figures, not silence; and only when some request got a
// response: a run in which none did measured nothing (HOTPATH_ERR_NO_RESPONSES), and "no
// problem found" would read as a clean bill of health for a server that was never exercised.
// Nor when a profile of the run cannot be used (empty, truncated, not a tree): the views that
// would have named a culprit are missing. Nor when the run did not complete (meta.json's
// outcome: interrupted, failed, the target crashed or exited): it measured part of what was asked.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { loopStats } from './signals/loop-stats.js';
import { loadGcActivity } from './signals/gc-activity.js';
import { gcShareViews } from './gc-pressure.js';
import { round } from './signals/stats.js';
import { agentCost } from './signals/agent-cost.js';
import { BLOCKING_STALL_MS, BLOCKING_STARVED_CPU_PER_ACTIVE, ownChildren } from './event-loop-blocking.js';
import { describePreemptedStall } from './signals/preempted-stall.js';
import { cpuViewOf, topAppFunction } from './signals/cpu-view.js';
import { describeCulprit, frameCulprit } from './signals/culprit.js';
import type { Culprit } from './finding.js';

/** A loop this busy serves at its limit: where its CPU goes is where more throughput would come from. */
export const HEALTHY_SATURATED_ELU = 0.9;
/** A share of the CPU one app function must carry to be pointed at in a healthy run. */
export const HEALTHY_TOP_FUNCTION_SHARE = 0.5;

export function healthyFinding(run: RunData, findings: readonly Finding[]): Finding | undefined {
  if (findings.some((f) => f.severity !== 'info')) return undefined;
  if (run.meta.outcome.status !== 'completed') return undefined;
  // A profile that could not be read leaves the diagnosis blind where it would look: no clean bill.
  if (run.profiles.some((p) => p.unusable !== undefined)) return undefined;
  const s = loopStats(run);
  const load = run.load;
  if (!s && !load) return undefined;
  if (!answeredAny(run)) return undefined;
  const gc = loadGcActivity(run);
  // The share gc-pressure reads (the profile's where the GCs were observed in slices): the same figure in both.
  const gcShare = gc.sampledMs > 0 ? gcShareViews(run, gc).share : 0;
  const rps = load?.requests.perSecond ?? s?.requestsPerSecond ?? 0;
  const p99 = load?.latency.p99 ?? s?.latencyP99Ms ?? 0;
  // The loop's utilization less the agent's own callbacks (agent-cost.ts): the capacity of the
  // server without them. V8's profiling is not in it (a lower bound), and the text says so.
  const cost = agentCost(run);
  const appElu = s ? Math.max(s.eluMean - (cost?.loopShare ?? 0), s.eluMean / 2) : 0;
  const capacity = s && appElu > 0 ? rps / appElu : undefined;
  const loop = s
    ? ` The event loop was busy ${round(s.eluMean * 100, 0)} % (delay p99 ${round(s.eldP99Ms, 1)} ms), each request cost ${round(s.cpuPerRequestMs * 1000, 0)} µs of CPU, GC took ${round(gcShare * 100, 1)} %.`
    : '';
  const starved =
    !s || s.cpuPerActive >= BLOCKING_STARVED_CPU_PER_ACTIVE
      ? ''
      : ownChildren(s)
        ? ` Its own child processes (${round(s.childProcessesMean, 1)} running on average) competed with it for the CPU (the target had it ${round(s.cpuPerActive * 100, 0)} % of its loop's active time).`
        : ` Other processes competed for the CPU (the target had it ${round(s.cpuPerActive * 100, 0)} % of its loop's active time): throughput and delays understate this server.`;
  const corrected = cost
    ? ` (without the agent's own ${round(cost.loopShare * 100, 1)} % of the loop; not corrected for the CPU profile's sampling)`
    : " (not corrected for the agent's own cost)";
  const headroom =
    s && s.eluMean < HEALTHY_SATURATED_ELU && capacity
      ? ` At this cost per request one event loop could serve about ${round(capacity, -2)} req/s${corrected}.`
      : '';
  const top = s && s.eluMean >= HEALTHY_SATURATED_ELU ? dominantFunction(run) : undefined;
  const lever = top
    ? ` ${round(top.share * 100, 0)} % of the CPU goes to ${describeCulprit(top.culprit)}: the place to start if this route must serve more.`
    : '';
  return {
    code: 'HOTPATH_HEALTHY',
    category: 'healthy',
    severity: 'info',
    title: 'No performance problem found',
    summary: `${round(rps, 0)} req/s with latency p99 ${round(p99, 2)} ms.${loop}${headroom}${lever}${starved}${s ? describePreemptedStall(s, BLOCKING_STALL_MS) : ''}`,
    evidence: {
      requestsPerSecond: round(rps, 1),
      latencyP99Ms: round(p99, 3),
      ...(s
        ? {
            eluMean: round(s.eluMean, 3),
            loopHeadroom: round(1 - s.eluMean, 3),
            eldP99Ms: round(s.eldP99Ms, 2),
            cpuPerRequestMs: round(s.cpuPerRequestMs, 4),
            gcShare: round(gcShare, 4),
            cpuPerActive: round(s.cpuPerActive, 2),
          }
        : {}),
      ...(capacity ? { estimatedCapacityRps: round(capacity, 0), capacityCorrectedForAgent: cost !== undefined } : {}),
      ...(cost ? { agentCostShare: round(cost.shareOfCpu, 4) } : {}),
      ...(s && s.preemptedStalls > 0 ? { preemptedStalls: s.preemptedStalls, preemptedStallMaxMs: round(s.preemptedStallMaxMs, 0) } : {}),
      // Not a culprit: nothing is wrong; the function is where more throughput would come from.
      ...(top ? { topFunction: describeCulprit(top.culprit), topFunctionShare: round(top.share, 3) } : {}),
    },
    recommendation:
      'Nothing to fix at this load. Raise the load (`-c`, `--rate`) or test the routes real traffic hits most (`--path`, a scenario) to find the limit.',
    impact: 0,
  };
}

/** The app function carrying most of the profiled CPU, when it carries most of it. */
function dominantFunction(run: RunData): { culprit: Culprit; share: number } | undefined {
  const found = topAppFunction(cpuViewOf(run));
  return found && found.share >= HEALTHY_TOP_FUNCTION_SHARE
    ? { culprit: frameCulprit(found.top.frame, run.cwd), share: found.share }
    : undefined;
}

/**
 * Whether the run measured anything: the load got a response (from outside), or, without a load
 * result (the run ended before one was written), the target threads answered a request.
 */
export function answeredAny(run: RunData): boolean {
  if (run.load) return run.load.requests.total > 0;
  return (loopStats(run)?.requests ?? 0) > 0;
}
