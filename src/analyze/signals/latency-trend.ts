// Latency creep: server-side latency rising with time under constant load. Growth analyzers
// (listeners, routes, timers, heap) use it as evidence of cost; latency-creep.ts reports it
// alone when nothing explains it.

import type { RunData } from '../../run-dir/run-data.js';
import { busiestThread, loadWindow, windowSamples } from './load-window.js';
import { linearFit, mean, round, weightedMean } from './stats.js';
import { latencyWeight } from './latency-weight.js';
import { perRun } from '../../run-dir/per-run.js';

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
  /** The server's own latency p50 (the agent's timing) in the first and last third, ms: the same seconds. */
  serverEarlyMs: number;
  serverLateMs: number;
  creeping: boolean;
}

/**
 * Per-second latency as the clients saw it (the load timeline: queueing included) when the run
 * drove load, else the server's own timing; and CPU per request from the agent's samples.
 * Server timing alone misses work done after the response (an 'after' listener, a 'finish'
 * hook) and time spent queued behind a busy loop.
 */
export const latencyTrend: (run: RunData) => LatencyTrend | undefined = perRun(computeTrend);

function computeTrend(run: RunData): LatencyTrend | undefined {
  const w = loadWindow(run);
  const thread = busiestThread(run, w);
  const samples = thread ? windowSamples(thread, w).filter((s) => s.http && s.http.finished > 0) : [];
  const t0 = w?.start ?? samples[0]?.t ?? 0;
  const perSecond = new Map<number, { cpuUs: number; finished: number; p50: number[]; counts: number[] }>();
  for (const s of samples) {
    const k = Math.max(0, Math.floor((s.t - s.intervalMs / 2 - t0) / 1000));
    const b = perSecond.get(k) ?? { cpuUs: 0, finished: 0, p50: [], counts: [] };
    b.cpuUs += s.cpu.user + s.cpu.system;
    b.finished += s.http?.finished ?? 0;
    b.p50.push(s.http?.latency.p50 ?? 0);
    b.counts.push(s.http ? latencyWeight(s.http) : 0);
    perSecond.set(k, b);
  }
  const timeline = (run.load?.timeline ?? []).filter((p) => p.requests > 0);
  const seconds: number[] = [];
  const p50Ms: number[] = [];
  const serverP50Ms: number[] = [];
  const cpuPerRequestMs: number[] = [];
  if (timeline.length >= CREEP_MIN_POINTS) {
    const first = timeline[0].second;
    for (const p of timeline) {
      const b = perSecond.get(p.second - first);
      seconds.push(p.second - first);
      p50Ms.push(p.p50);
      serverP50Ms.push(b ? weightedMean(b.p50, b.counts) : 0);
      cpuPerRequestMs.push(b && b.finished > 0 ? b.cpuUs / 1000 / b.finished : 0);
    }
  } else {
    for (const [k, b] of [...perSecond].sort((a, c) => a[0] - c[0])) {
      seconds.push(k);
      p50Ms.push(weightedMean(b.p50, b.counts));
      serverP50Ms.push(weightedMean(b.p50, b.counts));
      cpuPerRequestMs.push(b.cpuUs / 1000 / Math.max(1, b.finished));
    }
  }
  if (seconds.length === 0) return undefined;
  return summarize(seconds, p50Ms, cpuPerRequestMs, serverP50Ms);
}

function thirds(xs: number[]): [number, number] {
  const k = Math.max(1, Math.floor(xs.length / 3));
  return [mean(xs.slice(0, k)), mean(xs.slice(xs.length - k))];
}

function summarize(seconds: number[], p50Ms: number[], cpuPerRequestMs: number[], serverP50Ms: number[]): LatencyTrend {
  const fit = linearFit(seconds, p50Ms);
  const [earlyMs, lateMs] = thirds(p50Ms);
  const [serverEarly, serverLate] = thirds(serverP50Ms.filter((x) => x > 0));
  const [cpuEarly, cpuLate] = thirds(cpuPerRequestMs.filter((x) => x > 0));
  const ratio = earlyMs > 0 ? lateMs / earlyMs : 0;
  const creeping =
    seconds.length >= CREEP_MIN_POINTS &&
    fit.slope > 0 &&
    ratio >= CREEP_MIN_RATIO &&
    fit.r2 >= CREEP_MIN_R2 &&
    lateMs - earlyMs >= CREEP_MIN_DELTA_MS;
  return {
    seconds,
    p50Ms: p50Ms.map((x) => round(x, 3)),
    cpuPerRequestMs: cpuPerRequestMs.map((x) => round(x, 4)),
    earlyMs: round(earlyMs, 3),
    lateMs: round(lateMs, 3),
    ratio: round(ratio, 2),
    slopeMsPerS: round(fit.slope, 4),
    r2: round(fit.r2, 3),
    cpuPerRequestEarlyMs: round(cpuEarly, 4),
    cpuPerRequestLateMs: round(cpuLate, 4),
    serverEarlyMs: round(serverEarly, 3),
    serverLateMs: round(serverLate, 3),
    creeping,
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
