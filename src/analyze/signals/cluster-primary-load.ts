// What a cluster primary did over the load window, from its own stream (`primary` messages,
// ThreadTelemetry.primary): connections handed to workers, its CPU, loop, heap and the sockets
// it held, per second of the window, and how each followed the connection rate.

import type { PrimaryMessage } from '../../agent/protocol.js';
import type { RunData, ThreadTelemetry } from '../../run-dir/run-data.js';
import { loadWindow, type Window } from './load-window.js';
import { max, mean, sum } from './stats.js';

/** One second (or so) of the primary's stream: the connection rate and what it cost. */
export interface PrimaryPoint {
  /** Connections handed to workers per second. */
  rate: number;
  /** Share of one core the primary used (without the agent's own callbacks). */
  coreShare: number;
  elu: number;
  /** Loop delay p99 of the point's samples (the largest), ms. */
  delayP99Ms: number;
  /** Sockets held at the point's last sample. */
  heldSockets: number;
}

/** A line through the points, y = intercept + slope × rate; r is Pearson's correlation. */
export interface Fit {
  slope: number;
  intercept: number;
  r: number;
}

export interface PrimaryLoad {
  pid: number;
  seconds: number;
  handedOff: number;
  refused: number;
  /** Connections handed to workers per second over the window. */
  rate: number;
  cpuUs: number;
  coreShare: number;
  eluMean: number;
  delayP99Ms: number;
  delayMaxMs: number;
  heldMean: number;
  heldPeak: number;
  heapUsedStart: number;
  heapUsedEnd: number;
  heapUsedPeak: number;
  workers: number;
  schedulingPolicy?: number;
  /** Hand-offs per cluster worker id over the window. */
  perWorker: Record<string, number>;
  points: PrimaryPoint[];
  forkSite?: PrimaryMessage['forkSite'];
}

/** Samples are grouped into points of about this length to follow the rate over the run. */
export const POINT_MS = 1000;

/** The run's cluster primaries (threads with a primary stream). */
export function primaryThreads(run: RunData): ThreadTelemetry[] {
  return run.threads.filter((t) => (t.primary?.length ?? 0) > 0);
}

function inside(m: PrimaryMessage, w: Window | null): boolean {
  if (!w) return true;
  const mid = m.t - m.intervalMs / 2;
  return mid >= w.start && mid <= w.end;
}

const cpuOf = (m: PrimaryMessage): number => Math.max(0, m.cpu.user + m.cpu.system - m.agentUs);
const handedOf = (m: PrimaryMessage): number => sum(Object.values(m.handedOff));

export function primaryLoad(run: RunData, thread: ThreadTelemetry): PrimaryLoad | undefined {
  const w = loadWindow(run);
  const all = thread.primary ?? [];
  const ms = all.filter((m) => inside(m, w));
  const totalMs = sum(ms.map((m) => m.intervalMs));
  if (ms.length === 0 || totalMs <= 0) return undefined;
  const seconds = totalMs / 1000;
  const handedOff = sum(ms.map(handedOf));
  const cpuUs = sum(ms.map(cpuOf));
  const perWorker: Record<string, number> = {};
  for (const m of ms) for (const [id, n] of Object.entries(m.handedOff)) perWorker[id] = (perWorker[id] ?? 0) + n;
  const last = ms[ms.length - 1];
  const forkSite = all.find((m) => m.forkSite !== undefined)?.forkSite;
  return {
    pid: thread.pid,
    seconds,
    handedOff,
    refused: sum(ms.map((m) => m.refused ?? 0)),
    rate: handedOff / seconds,
    cpuUs,
    coreShare: cpuUs / (totalMs * 1000),
    eluMean: sum(ms.map((m) => m.elu * m.intervalMs)) / totalMs,
    delayP99Ms: max(ms.map((m) => m.eld.p99)),
    delayMaxMs: max(ms.map((m) => m.eld.max)),
    heldMean: mean(ms.map((m) => m.heldSockets)),
    heldPeak: max(ms.map((m) => m.heldSockets)),
    heapUsedStart: ms[0].mem.heapUsed,
    heapUsedEnd: last.mem.heapUsed,
    heapUsedPeak: max(ms.map((m) => m.mem.heapUsed)),
    workers: last.workers,
    ...(last.schedulingPolicy !== undefined ? { schedulingPolicy: last.schedulingPolicy } : {}),
    perWorker,
    points: points(ms),
    ...(forkSite !== undefined ? { forkSite } : {}),
  };
}

/** The window's samples in consecutive groups of about POINT_MS. */
function points(ms: PrimaryMessage[]): PrimaryPoint[] {
  const out: PrimaryPoint[] = [];
  let group: PrimaryMessage[] = [];
  let span = 0;
  for (const m of ms) {
    group.push(m);
    span += m.intervalMs;
    if (span < POINT_MS) continue;
    out.push(point(group, span));
    group = [];
    span = 0;
  }
  // A short tail is kept only when it is at least half a point.
  if (group.length > 0 && span >= POINT_MS / 2) out.push(point(group, span));
  return out;
}

function point(group: PrimaryMessage[], spanMs: number): PrimaryPoint {
  return {
    rate: sum(group.map(handedOf)) / (spanMs / 1000),
    coreShare: sum(group.map(cpuOf)) / (spanMs * 1000),
    elu: sum(group.map((m) => m.elu * m.intervalMs)) / spanMs,
    delayP99Ms: max(group.map((m) => m.eld.p99)),
    heldSockets: group[group.length - 1].heldSockets,
  };
}

/** Least-squares line of y over x; undefined with fewer than 3 points or no spread in x. */
export function fitLine(xs: readonly number[], ys: readonly number[]): Fit | undefined {
  const n = xs.length;
  if (n < 3 || ys.length !== n) return undefined;
  const mx = mean(xs);
  const my = mean(ys);
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (xs[i] - mx) ** 2;
    syy += (ys[i] - my) ** 2;
    sxy += (xs[i] - mx) * (ys[i] - my);
  }
  if (sxx === 0) return undefined;
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx, r: syy === 0 ? 0 : sxy / Math.sqrt(sxx * syy) };
}
