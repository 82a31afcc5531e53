// Latency creep: server-side latency rising with time under constant load. Growth analyzers
// (listeners, routes, timers, heap) use it as evidence of cost; latency-creep.ts reports it
// alone when nothing explains it.

import type { RunData } from '../../run-dir/run-data.js';
import { busiestThread, loadWindow, windowSamples } from './load-window.js';
import { linearFit, mean, round, sum, weightedMean } from './stats.js';

/** Late latency must be at least this multiple of early latency (a 50 % rise is not noise). */
export const CREEP_MIN_RATIO = 1.5;
/** The rise must be steady: the linear fit explains at least half of the variance. */
export const CREEP_MIN_R2 = 0.5;
/** And large enough to matter to a person: at least 1 ms at the median. */
export const CREEP_MIN_DELTA_MS = 1;
/** Seconds of data needed to call a trend. */
export const CREEP_MIN_POINTS = 4;

export interface LatencyTrend {
  /** Per-second server latency p50 (ms) and CPU per request (ms). */
  seconds: number[];
  p50Ms: number[];
  cpuPerRequestMs: number[];
  earlyMs: number;
  lateMs: number;
  ratio: number;
  /** ms of latency added per second of run. */
  slopeMsPerS: number;
  r2: number;
  cpuPerRequestEarlyMs: number;
  cpuPerRequestLateMs: number;
  creeping: boolean;
}

export function latencyTrend(run: RunData): LatencyTrend | undefined {
  const w = loadWindow(run);
  const thread = busiestThread(run, w);
  if (!thread) return undefined;
  const samples = windowSamples(thread, w).filter((s) => s.http && s.http.finished > 0);
  if (samples.length === 0) return undefined;
  const t0 = samples[0].t;
  const buckets = new Map<number, typeof samples>();
  for (const s of samples) {
    const k = Math.floor((s.t - t0) / 1000);
    buckets.set(k, [...(buckets.get(k) ?? []), s]);
  }
  const seconds: number[] = [];
  const p50Ms: number[] = [];
  const cpuPerRequestMs: number[] = [];
  for (const [k, group] of [...buckets].sort((a, b) => a[0] - b[0])) {
    const finished = sum(group.map((s) => s.http?.finished ?? 0));
    seconds.push(k);
    p50Ms.push(weightedMean(group.map((s) => s.http?.latency.p50 ?? 0), group.map((s) => s.http?.latency.count ?? 0)));
    cpuPerRequestMs.push(sum(group.map((s) => s.cpu.user + s.cpu.system)) / 1000 / Math.max(1, finished));
  }
  return summarize(seconds, p50Ms, cpuPerRequestMs);
}

function thirds(xs: number[]): [number, number] {
  const k = Math.max(1, Math.floor(xs.length / 3));
  return [mean(xs.slice(0, k)), mean(xs.slice(xs.length - k))];
}

function summarize(seconds: number[], p50Ms: number[], cpuPerRequestMs: number[]): LatencyTrend {
  const fit = linearFit(seconds, p50Ms);
  const [earlyMs, lateMs] = thirds(p50Ms);
  const [cpuEarly, cpuLate] = thirds(cpuPerRequestMs);
  const ratio = earlyMs > 0 ? lateMs / earlyMs : 0;
  const creeping = seconds.length >= CREEP_MIN_POINTS && fit.slope > 0 && ratio >= CREEP_MIN_RATIO &&
    fit.r2 >= CREEP_MIN_R2 && lateMs - earlyMs >= CREEP_MIN_DELTA_MS;
  return {
    seconds, p50Ms: p50Ms.map((x) => round(x, 3)), cpuPerRequestMs: cpuPerRequestMs.map((x) => round(x, 4)),
    earlyMs: round(earlyMs, 3), lateMs: round(lateMs, 3), ratio: round(ratio, 2),
    slopeMsPerS: round(fit.slope, 4), r2: round(fit.r2, 3),
    cpuPerRequestEarlyMs: round(cpuEarly, 4), cpuPerRequestLateMs: round(cpuLate, 4), creeping,
  };
}

/** The share of late request time the creep added: what removing the cause would win back. */
export function creepShare(trend: LatencyTrend | undefined): number {
  if (!trend || !trend.creeping || trend.lateMs <= 0) return 0;
  return Math.max(0, Math.min(1, (trend.lateMs - trend.earlyMs) / trend.lateMs));
}

/** Evidence fields every growth finding carries when latency creeps. */
export function trendEvidence(trend: LatencyTrend | undefined): Record<string, unknown> {
  if (!trend?.creeping) return {};
  return { latencyEarlyMs: trend.earlyMs, latencyLateMs: trend.lateMs, latencySlopeMsPerS: trend.slopeMsPerS, latencyTrendR2: trend.r2 };
}
