// Per-second aggregates of a long run's telemetry samples. A 21-minute run at `--interval 10`
// holds 125,000 samples of about 600 bytes each, kept as ~10 objects apiece once parsed; merged
// into one sample per thread and epoch second while reading, they weigh what a run at
// `--interval 1000` would, and the analyzers read them as such (every figure they take from a
// sample is a sum, a time-weighted mean or a snapshot over the sample's `intervalMs`).
//
// Merging a into b (b later): counts and times add up; utilization and means are weighted
// (by interval, by count); min/max are kept; the p90/p99 of a merged interval are the larger of
// the two (a spike stays visible, as in the agent's own summaries); mem, resources and other
// gauges are b's (a snapshot at the end of the interval). A sample taken right after the
// post-load GC (`postLoadGc`) is never merged: analyzers look for it.

import type { HistogramSummary, SampleMessage } from '../agent/protocol.js';

/** Telemetry files larger than this are read into per-second aggregates. */
export const MERGE_SAMPLES_ABOVE_BYTES = 32 * 1024 * 1024;

const second = (t: number): number => Math.floor(t / 1000);

/** Whether `b` (the next sample of the same thread) may be merged into `a`. */
export function mergeable(a: SampleMessage, b: SampleMessage): boolean {
  return second(a.t) === second(b.t) && a.postLoadGc === undefined && b.postLoadGc === undefined && b.t >= a.t;
}

function mergeHistogram(a: HistogramSummary, b: HistogramSummary): HistogramSummary {
  const count = a.count + b.count;
  const w = (x: number, y: number) => (count > 0 ? (x * a.count + y * b.count) / count : (x + y) / 2);
  return {
    count,
    min: a.count === 0 ? b.min : b.count === 0 ? a.min : Math.min(a.min, b.min),
    mean: w(a.mean, b.mean),
    max: Math.max(a.max, b.max),
    p50: w(a.p50, b.p50),
    p90: Math.max(a.p90, b.p90),
    p99: Math.max(a.p99, b.p99),
  };
}

const sumRecords = (a: Record<string, number>, b: Record<string, number>): Record<string, number> => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
};

const addOptional = (x: number | undefined, y: number | undefined): number | undefined =>
  x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0);

function mergeHttp(a: SampleMessage['http'], b: SampleMessage['http']): SampleMessage['http'] {
  if (!a || !b) return b ?? a;
  const closed = a.closed + b.closed;
  const out: NonNullable<SampleMessage['http']> = {
    started: a.started + b.started,
    finished: a.finished + b.finished,
    active: b.active,
    connections: a.connections + b.connections,
    openConnections: b.openConnections,
    latency: mergeHistogram(a.latency, b.latency),
    statusCodes: sumRecords(a.statusCodes, b.statusCodes),
    reused: a.reused + b.reused,
    closed,
    requestsPerClosedConnection:
      closed > 0 ? (a.requestsPerClosedConnection * a.closed + b.requestsPerClosedConnection * b.closed) / closed : 0,
  };
  const closing = addOptional(a.closing, b.closing);
  const closeHeader = addOptional(a.closeHeader, b.closeHeader);
  if (closing !== undefined) out.closing = closing;
  if (closeHeader !== undefined) out.closeHeader = closeHeader;
  if (b.drivenOnly) out.drivenOnly = true;
  return out;
}

function mergeGc(a: SampleMessage['gc'], b: SampleMessage['gc']): SampleMessage['gc'] {
  if (!a || !b) return b ?? a;
  const heapAfterFull = [...(a.heapAfterFull ?? []), ...(b.heapAfterFull ?? [])];
  return { observedMs: a.observedMs + b.observedMs, full: a.full + b.full, ...(heapAfterFull.length > 0 ? { heapAfterFull } : {}) };
}

/** One sample covering both intervals (`b` follows `a`, see mergeable). */
export function mergeSamples(a: SampleMessage, b: SampleMessage): SampleMessage {
  const intervalMs = a.intervalMs + b.intervalMs;
  const cpu: SampleMessage['cpu'] = { user: a.cpu.user + b.cpu.user, system: a.cpu.system + b.cpu.system };
  const threadUser = addOptional(a.cpu.threadUser, b.cpu.threadUser);
  const threadSystem = addOptional(a.cpu.threadSystem, b.cpu.threadSystem);
  if (threadUser !== undefined) cpu.threadUser = threadUser;
  if (threadSystem !== undefined) cpu.threadSystem = threadSystem;
  const threadOnCpu = addOptional(a.cpu.threadOnCpu, b.cpu.threadOnCpu);
  if (threadOnCpu !== undefined) cpu.threadOnCpu = threadOnCpu;
  const out: SampleMessage = {
    ...b,
    intervalMs,
    eld: mergeHistogram(a.eld, b.eld),
    elu: intervalMs > 0 ? (a.elu * a.intervalMs + b.elu * b.intervalMs) / intervalMs : b.elu,
    cpu,
  };
  const httpOther = addOptional(a.httpOther, b.httpOther);
  if (httpOther !== undefined) out.httpOther = httpOther;
  const gc = mergeGc(a.gc, b.gc);
  if (gc) out.gc = gc;
  const http = mergeHttp(a.http, b.http);
  if (http) out.http = http;
  return out;
}
