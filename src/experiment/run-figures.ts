// The figures of one finished run that experiments and repeated runs judge on: throughput,
// latency p50 and p99 (load.json), GC share of wall time and RSS max (the agent's telemetry).

import type { Report } from '../report/report-schema.js';

export interface RunFigures {
  runDir: string;
  /** Completed requests per second over the load window. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** GC time over wall time in the window, 0..1; absent without telemetry. */
  gcShare?: number;
  rssMaxBytes?: number;
  /** Codes of the critical and warning findings. */
  critical: string[];
  warnings: string[];
}

/** The run's figures, or undefined when it has no load results (it failed before or during its load). */
export function runFigures(runDir: string, report: Report): RunFigures | undefined {
  const load = report.load;
  if (!load || load.requests.total === 0) return undefined;
  const t = report.telemetry;
  return {
    runDir,
    rps: load.requests.perSecond,
    p50Ms: load.latency.p50,
    p99Ms: load.latency.p99,
    errors: load.errors.total,
    ...(t ? { gcShare: t.gc.shareOfWall, rssMaxBytes: t.memory.rssMaxBytes } : {}),
    critical: report.findings.filter((f) => f.severity === 'critical').map((f) => f.code),
    warnings: report.findings.filter((f) => f.severity === 'warning').map((f) => f.code),
  };
}
