// What a `--repeat N` series measured, recorded in the last run's report.json (`repeat`) and
// printed after its summary: throughput and latency p50/p99 as medians over the runs with their
// bootstrap 95% intervals, for this build and for the baseline's re-runs.

import type { RepeatSummary, Report, SeriesFigures, SeriesMedian } from '../report/report-schema.js';
import { medianInterval } from '../compare/median-interval.js';

export interface SeriesRuns {
  /** Each run's directory and its report (absent when the run was not diagnosed). */
  runs: readonly { runDir: string; report?: Report | undefined }[];
  baselineRuns: readonly { runDir: string; report?: Report | undefined }[];
  baselineNote?: string | undefined;
}

export function repeatSummary(series: SeriesRuns): RepeatSummary {
  return {
    runs: series.runs.map((r) => r.runDir),
    baselineRuns: series.baselineRuns.map((r) => r.runDir),
    ...(series.baselineNote !== undefined ? { baselineNote: series.baselineNote } : {}),
    thisBuild: seriesFigures(series.runs.flatMap((r) => (r.report ? [r.report] : []))),
    ...(series.baselineRuns.length > 0
      ? { baseline: seriesFigures(series.baselineRuns.flatMap((r) => (r.report ? [r.report] : []))) }
      : {}),
  };
}

/** The medians over the reports that have load results; null when none has. */
export function seriesFigures(reports: readonly Report[]): SeriesFigures | null {
  const loads = reports.flatMap((r) => (r.load && r.load.requests.total > 0 ? [r.load] : []));
  if (loads.length === 0) return null;
  return {
    runs: loads.length,
    requestsPerSecond: seriesMedian(loads.map((l) => l.requests.perSecond)),
    latencyP50Ms: seriesMedian(loads.map((l) => l.latency.p50)),
    latencyP99Ms: seriesMedian(loads.map((l) => l.latency.p99)),
  };
}

function seriesMedian(xs: number[]): SeriesMedian {
  const { median, low, high } = medianInterval(xs);
  return { median, ...(low !== undefined && high !== undefined ? { low, high } : {}) };
}

/** The lines printed after the last run's summary: one block for this build, one for the baseline's re-runs. */
export function repeatLines(summary: RepeatSummary): string[] {
  return [
    ...figuresLines('this build', summary.thisBuild),
    ...(summary.baseline !== undefined ? figuresLines('baseline', summary.baseline) : []),
  ];
}

function figuresLines(title: string, f: SeriesFigures | null): string[] {
  if (f === null) return [`  ${title}: no run has load results`];
  return [
    `  ${title} (${f.runs} runs, medians): throughput ${show(f.requestsPerSecond, 'req/s', 1)}`,
    `    p50 ${show(f.latencyP50Ms, 'ms', 2)}, p99 ${show(f.latencyP99Ms, 'ms', 2)}`,
  ];
}

function show(m: SeriesMedian, unit: string, digits: number): string {
  const interval =
    m.low !== undefined && m.high !== undefined ? ` (95% interval ${m.low.toFixed(digits)} … ${m.high.toFixed(digits)})` : '';
  return `${m.median.toFixed(digits)} ${unit}${interval}`;
}
