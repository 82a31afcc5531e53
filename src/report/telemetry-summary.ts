// The TelemetrySummary of report.json: what the agent measured inside the load window,
// reduced to the figures people compare between runs (delay, utilization, CPU, memory, GC, HTTP).

import type { SampleMessage } from '../agent/protocol.js';
import type { RunData, ThreadTelemetry } from '../run-dir/run-data.js';
import type { TelemetrySummary } from './report-schema.js';
import { loadWindow, loopDelaySamples, targetThreads, windowSamples, windowStalls } from '../analyze/signals/load-window.js';
import { loadGcActivity, roundKinds, type GcActivity } from '../analyze/signals/gc-activity.js';
import { max, percentile, round, sum, weightedMean, weightedPercentile } from '../analyze/signals/stats.js';
import { latencyWeight } from '../analyze/signals/latency-weight.js';
import { loopStats } from '../analyze/signals/loop-stats.js';
import { onePerProcess, processCpuOf } from '../analyze/signals/process-cpu.js';
import { agentCost } from '../analyze/signals/agent-cost.js';
import { summarizeCluster } from './cluster-summary.js';

export function summarizeTelemetry(run: RunData): TelemetrySummary | null {
  const w = loadWindow(run);
  const threads = targetThreads(run);
  const perThread = threads.map((t) => ({ t, samples: windowSamples(t, w) }));
  const samples = perThread.flatMap((x) => x.samples);
  if (samples.length === 0) return null;
  const durationMs = w?.durationMs ?? sum(perThread[0].samples.map((s) => s.intervalMs));
  const gc = loadGcActivity(run);
  const stalls = threads.flatMap((t) => windowStalls(t, w));
  return {
    targets: threads.map((t) => ({ pid: t.pid, threadId: t.threadId, ...portOf(t, run.meta.target?.port) })),
    window: w ? { start: w.start, end: w.end, durationMs: w.durationMs } : null,
    eventLoop: {
      ...eventLoop(
        samples,
        threads.flatMap((t) => loopDelaySamples(t, w)),
      ),
      ...profiledUtilization(run),
    },
    cpu: cpu(onePerProcess(perThread), durationMs),
    memory: memory(perThread[0].samples),
    gc: gcSummary(gc),
    http: http(samples),
    stalls: { count: stalls.length, maxMs: round(max(stalls.map((s) => s.durationMs)), 1) },
    ...agentCostSummary(run),
    ...summarizeCluster(run),
  };
}

function agentCostSummary(run: RunData): Pick<TelemetrySummary, 'agentCost'> {
  const c = agentCost(run);
  if (!c) return {};
  return {
    agentCost: {
      shareOfCpu: round(c.shareOfCpu, 4),
      agentCpuMs: round(c.agentCpuMs, 1),
      mainThreadMs: round(c.mainThreadMs, 1),
      workerMs: round(c.workerMs, 1),
      profilerThreadMs: round(c.profilerThreadMs, 1),
      targetCpuMs: round(c.targetCpuMs, 1),
      loopShare: round(c.loopShare, 4),
      ...cpuInterval(run),
    },
  };
}

/** The thread's port: the driven one when it listens there (it may also run other servers), else its first. */
function portOf(t: ThreadTelemetry, driven: number | undefined): { port?: number } {
  const port = t.listens.find((l) => l.port !== undefined && l.port === driven)?.port ?? t.listens[0]?.port;
  return port !== undefined ? { port } : {};
}

/** `delay`: the samples without the agent's own pauses (loopDelaySamples), as the analyzers read them. */
function eventLoop(samples: SampleMessage[], delay: SampleMessage[]): TelemetrySummary['eventLoop'] {
  const weights = samples.map((s) => s.intervalMs);
  return {
    delayP50Ms: round(
      percentile(
        delay.map((s) => s.eld.p50),
        50,
      ),
      3,
    ),
    delayP99Ms: round(
      percentile(
        delay.map((s) => s.eld.p99),
        99,
      ),
      3,
    ),
    delayMaxMs: round(max(delay.map((s) => s.eld.max)), 3),
    utilizationMean: round(
      weightedMean(
        samples.map((s) => s.elu),
        weights,
      ),
      4,
    ),
    utilizationMax: round(max(samples.map((s) => s.elu)), 4),
  };
}

/**
 * The loop's mean utilization as the analyzers judge it: from the CPU profiles' idle samples when
 * they cover the target threads (ELU reads high while a profile runs), so the summary line and
 * the findings never disagree.
 */
function profiledUtilization(run: RunData): { utilizationMean: number } | Record<string, never> {
  const stats = loopStats(run);
  return stats ? { utilizationMean: round(stats.eluMean, 4) } : {};
}

/** Process CPU, counted once per process (worker threads repeat their process's figures). */
function cpu(groups: SampleMessage[][], durationMs: number): TelemetrySummary['cpu'] {
  const c = processCpuOf(groups, durationMs);
  return { userMs: round(c.userMs, 1), systemMs: round(c.systemMs, 1), coresUsedMean: round(c.cores, 3) };
}

function memory(samples: SampleMessage[]): TelemetrySummary['memory'] {
  return {
    rssMaxBytes: max(samples.map((s) => s.mem.rss)),
    heapUsedMaxBytes: max(samples.map((s) => s.mem.heapUsed)),
    heapUsedStartBytes: samples[0]?.mem.heapUsed ?? 0,
    heapUsedEndBytes: samples[samples.length - 1]?.mem.heapUsed ?? 0,
  };
}

/** GC over the window, estimated from the GCs observed (the agent observes them in windows). */
function gcSummary(gc: GcActivity): TelemetrySummary['gc'] {
  return {
    count: gc.estimatedCount,
    totalMs: round(gc.estimatedMs, 2),
    shareOfWall: gc.sampledMs > 0 ? round(gc.estimatedMs / gc.sampledMs, 4) : 0,
    byKind: roundKinds(gc.estimated),
    observed: { count: gc.events.length, shareOfTime: round(gc.coverage, 4) },
    fullGcs: gc.fullGcs,
  };
}

function http(samples: SampleMessage[]): TelemetrySummary['http'] {
  const hs = samples.map((s) => s.http).filter((h) => h !== undefined);
  if (hs.length === 0) return null;
  const statusCodes: Record<string, number> = {};
  for (const h of hs) for (const [code, n] of Object.entries(h.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const counts = hs.map(latencyWeight);
  return {
    requests: sum(hs.map((h) => h.finished)),
    connections: sum(hs.map((h) => h.connections)),
    latencyP50Ms: round(
      weightedPercentile(
        hs.map((h) => h.latency.p50),
        counts,
        50,
      ),
      3,
    ),
    latencyP99Ms: round(
      weightedMean(
        hs.map((h) => h.latency.p99),
        counts,
      ),
      3,
    ),
    statusCodes,
  };
}

/** The CPU profile's sampling interval the run used (its options), when it recorded one. */
function cpuInterval(run: RunData): { cpuSamplingIntervalUs?: number } {
  const o = run.meta.options;
  return o.profile !== false && typeof o.cpuInterval === 'number' ? { cpuSamplingIntervalUs: o.cpuInterval } : {};
}
