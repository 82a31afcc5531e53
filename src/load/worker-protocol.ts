// Messages between the load engine (main thread) and its worker threads. A worker sends
// one `tick` per second of the measured window and one `final`, never a message per request.
//
//   main                                   worker (owns its sockets, clock, histograms)
//    │── new Worker(workerData: WorkerConfig) ─▶│ connect nothing yet, build histograms
//    │◀──────────── ready ──────────────────────│
//    │── run {measure} ────────────────────────▶│ connect, send (warm-up when !measure)
//    │── measure ──────────────────────────────▶│ reset counters: the measured window starts
//    │◀──────────── tick (1/s) ─────────────────│ deltas + interval histograms (compressed)
//    │── stop ─────────────────────────────────▶│
//    │◀──────────── final ──────────────────────│ last partial interval + CPU, ELU
//                 (with -a a worker sends final by itself once its share is answered)

import type { RequestTemplate } from './request-template.js';

export interface WorkerTarget {
  /** Resolved address to connect to (no DNS in the hot path). */
  host?: string;
  port?: number;
  /** Unix socket path instead of host/port. */
  socketPath?: string;
  tls: boolean;
  /** TLS server name (SNI) and certificate check. */
  servername?: string;
  rejectUnauthorized: boolean;
}

export interface WorkerConfig {
  index: number;
  target: WorkerTarget;
  connections: number;
  pipelining: number;
  keepalive: boolean;
  timeoutMs: number;
  /** The sequence each connection sends, in order, looping. */
  templates: Pick<RequestTemplate, 'bytes' | 'head'>[];
  /** Open model: this worker's share of the arrival rate (req/s). */
  rate?: number;
  /** Offset of this worker's schedule in ms, so workers interleave their sends. */
  rateOffsetMs: number;
  /** This worker's share of -a (requests to send in the measured window). */
  amount?: number;
}

/** Indices into the counters array each worker keeps and sends as per-second deltas. */
export const C_COMPLETED = 0;
export const C_SENT = 1;
export const C_BYTES_READ = 2;
export const C_BYTES_WRITTEN = 3;
export const C_SOCKET_ERRORS = 4;
export const C_TIMEOUTS = 5;
export const C_PARSE = 6;
export const C_OPENED = 7;
export const C_CLOSED_BY_SERVER = 8;
export const C_LATE = 9;
export const COUNTERS = 10;

export type MainToWorker = { type: 'run'; measure: boolean } | { type: 'measure' } | { type: 'stop' };

export interface IntervalData {
  /** Counter deltas since the previous interval (see C_*). */
  counters: number[];
  /** Status code to count, this interval. */
  statuses: [number, number][];
  /** errno to count, this interval. */
  errors: Record<string, number>;
  /** Latency (from intended send in the open model), compressed HdrHistogram in µs. */
  latency: string;
  /** Service time (open model only), compressed HdrHistogram in µs. */
  service?: string;
  /** Worst lateness of a scheduled send, ms (open model). */
  maxLagMs: number;
}

export interface WorkerFinal extends IntervalData {
  type: 'final';
  inFlight: number;
  /** Open model: planned sends due before the end and never made. */
  dropped: number;
  /** Open model: sends planned in the measured window. */
  intended: number;
  elu: number;
  cpuUserMs?: number;
  cpuSystemMs?: number;
}

export type WorkerToMain = { type: 'ready' } | ({ type: 'tick' } & IntervalData) | WorkerFinal | { type: 'fatal'; message: string };
