// report.json: the diagnosis of one run. `{ version, target, load, telemetry, hotspots[], findings[] }`.
// Written by write-reports.ts into the run directory and printed by `--json`.

import type { Finding } from '../analyze/finding.js';
import type { LoadResult } from '../load/load-result.js';
import type { RunMeta } from '../run-dir/schema.js';
import type { AgentErrorRow } from '../analyze/signals/agent-errors.js';
import type { AgentCost } from '../analyze/signals/agent-cost.js';
import type { BudgetVerdict } from './budget-verdict.js';
import type { Hotspot } from '../profile/hotspots.js';

export const REPORT_VERSION = 1;

// A ranked function of report.json's `hotspots` is declared in profile/, where hotspots are ranked.
export type { Hotspot } from '../profile/hotspots.js';

export interface TelemetrySummary {
  /** Target processes and threads that served requests. */
  targets: { pid: number; threadId: number; port?: number }[];
  window: { start: number; end: number; durationMs: number } | null;
  eventLoop: { delayP50Ms: number; delayP99Ms: number; delayMaxMs: number; utilizationMean: number; utilizationMax: number };
  cpu: { userMs: number; systemMs: number; coresUsedMean: number };
  memory: { rssMaxBytes: number; heapUsedMaxBytes: number; heapUsedStartBytes: number; heapUsedEndBytes: number };
  /**
   * GC over the window. The agent observes GCs in windows of each second: counts and times are
   * estimated over the whole window from those observed (`observed`); full GCs are all counted.
   */
  gc: {
    count: number;
    totalMs: number;
    shareOfWall: number;
    byKind: Record<string, { count: number; totalMs: number }>;
    observed?: { count: number; shareOfTime: number };
    fullGcs?: number;
  };
  http: { requests: number; connections: number; latencyP50Ms: number; latencyP99Ms: number; statusCodes: Record<string, number> } | null;
  stalls: { count: number; maxMs: number };
  /**
   * Added: what the in-process agent cost the target over the window, as it measured itself
   * (docs/agent.md, Cost): its CPU (callbacks on the target threads, agent workers, V8's
   * profiler threads) over the target processes' CPU, and its callbacks' part of the loop's
   * utilization. A lower bound (V8's stack walks on the loop are not counted). Absent when the
   * agent did not measure it (an older agent).
   */
  agentCost?: AgentCost & {
    /** The CPU profile's sampling interval this run used (--cpu-interval), µs; absent without a CPU profile. */
    cpuSamplingIntervalUs?: number;
  };
  /**
   * Added: a cluster run (cluster workers served the load): requests and new connections per
   * worker over the window, how uneven that was, and the primary's own figures when it sent its
   * stream (`primary` messages; report/cluster-summary.ts). Absent for a single-process target.
   */
  cluster?: {
    workers: { workerId: number; pid: number; requests: number; connections: number; share: number }[];
    /** The busiest worker's requests over an even share (1 = even). */
    busiestOverEven: number;
    /** The busiest worker's requests over the least busy one's; null when one served none. */
    busiestOverQuietest: number | null;
    primary?: {
      pid: number;
      schedulingPolicy?: 'rr' | 'none';
      connectionsHandedOff: number;
      connectionsPerSecond: number;
      coreShare: number;
      cpuPerConnectionUs: number | null;
      utilizationMean: number;
      delayP99Ms: number;
      heldSocketsPeak: number;
      heapUsedMaxBytes: number;
    };
  };
}

export interface Report {
  version: typeof REPORT_VERSION;
  hotpathVersion: string;
  /** What was run and how it ended. */
  target: { command: string[]; cwd: string; url?: string; nodeVersion?: string; outcome: RunMeta['outcome'] };
  load: LoadResult | null;
  telemetry: TelemetrySummary | null;
  hotspots: Hotspot[];
  findings: Finding[];
  /** The run directory this report describes. */
  runDir: string;
  /**
   * What the in-process agents failed to do (a hook that threw, a collector or the profiler that
   * could not start), target processes first; `target`: in a process that served the load. Empty
   * when nothing failed; absent in reports written before it was added.
   */
  agentErrors?: AgentErrorRow[];

  /** Problems met reading the run directory (a skipped telemetry line, an unusable profile); absent when none. */
  warnings?: string[];

  /** The budgets of `hotpath run --assert/--max-regression` and their verdict; absent without budgets. */
  budgets?: BudgetVerdict;

  /** `hotpath run --repeat N`: in the last run's report, the series' medians with their 95% intervals; absent otherwise. */
  repeat?: RepeatSummary;
}

/** A median over the runs of a series, with its seeded bootstrap 95% interval (absent with one run). */
export interface SeriesMedian {
  median: number;
  low?: number;
  high?: number;
}

/** The figures of a series of runs, each the median over the runs that have load results. */
export interface SeriesFigures {
  /** Runs with load results: what the medians are over. */
  runs: number;
  requestsPerSecond: SeriesMedian;
  latencyP50Ms: SeriesMedian;
  latencyP99Ms: SeriesMedian;
}

export interface RepeatSummary {
  /** The run directories of the series, in order, and of the baseline's re-runs. */
  runs: string[];
  baselineRuns: string[];
  /** Why the baseline was or was not re-run; absent without --baseline. */
  baselineNote?: string;
  /** null when no run of the series has load results. */
  thisBuild: SeriesFigures | null;
  /** The baseline's re-runs; absent when it was not re-run. */
  baseline?: SeriesFigures | null;
}
