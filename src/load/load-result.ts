// The LoadResult: what one load run measured. One schema shared by `hotpath load --json`,
// the programmatic `load()` and `report.json.load`; documented in docs/load-result.md.
// Latencies are milliseconds with microsecond precision (3 decimals).

export const LOAD_RESULT_VERSION = 1;

export interface LatencyStats {
  /** Number of recorded samples (completed requests plus timeouts). */
  count: number;
  min: number;
  mean: number;
  stdev: number;
  p50: number;
  p75: number;
  p90: number;
  p97_5: number;
  p99: number;
  p999: number;
  p9999: number;
  max: number;
}

export interface TimelinePoint {
  /** Seconds since the start of the measured window (warm-up excluded). */
  second: number;
  requests: number;
  errors: number;
  bytesRead: number;
  /** Latency percentiles in ms of the requests completed in that second (0 when none). */
  p50: number;
  p99: number;
}

export interface GeneratorWorkerStats {
  worker: number;
  connections: number;
  /** CPU time of this worker thread, when the platform reports it (Node 22+). */
  cpuUserMs?: number;
  cpuSystemMs?: number;
  /** Event-loop utilization of the worker over the measured window, 0..1. */
  elu: number;
}

export interface LoadResult {
  version: typeof LOAD_RESULT_VERSION;
  /** The URL (or unix:/path) load was driven at. */
  url: string;
  model: 'closed' | 'open';
  /** Effective options (after defaults). */
  options: {
    connections: number;
    pipelining: number;
    workers: number;
    /** Seconds, when the run was time-bound. */
    duration?: number;
    /** Requests, when the run was count-bound. */
    amount?: number;
    warmup: number;
    /** Total arrival rate in req/s (open model). */
    rate?: number;
    timeoutMs: number;
    keepalive: boolean;
    method: string;
    scenario?: number;
  };
  /** Wall-clock start and end of the measured window (epoch ms) and its length. */
  start: number;
  end: number;
  durationMs: number;
  requests: {
    /** Requests that got a complete response, any status. */
    total: number;
    /** Requests written to a socket during the measured window. */
    sent: number;
    perSecond: number;
    /** Requests still in flight when the run ended (neither answered nor timed out). */
    inFlightAtEnd: number;
  };
  /** Latency: from the intended send time in open-model runs (corrected for coordinated omission). */
  latency: LatencyStats;
  /** Service time from the actual write; present in open-model runs. */
  serviceTime?: LatencyStats;
  throughput: {
    bytesRead: number;
    bytesWritten: number;
    bytesReadPerSecond: number;
  };
  /** Status code to count, exactly as counted by the generator. */
  statusCodes: Record<string, number>;
  errors: {
    total: number;
    timeouts: number;
    /** errno (ECONNRESET, ECONNREFUSED, EPIPE, ...) to count. */
    byCode: Record<string, number>;
    /** Malformed responses. */
    parse: number;
  };
  /** Connections opened during the measured window. */
  connections: { opened: number; closedByServer: number };
  /** Open model only: how well the schedule was kept. */
  schedule?: {
    /** Sends that went out later than planned by more than the lateness threshold. */
    late: number;
    /** Planned sends that could not be made at all (no free connection before the run ended). */
    dropped: number;
    /** Sends intended in the window. */
    intended: number;
    /** Worst lateness of a send in ms. */
    maxLagMs: number;
  };
  timeline: TimelinePoint[];
  generator: {
    cpuUserMs: number;
    cpuSystemMs: number;
    /** Highest event-loop utilization of any worker, 0..1. */
    maxElu: number;
    workers: GeneratorWorkerStats[];
    /** True when the generator, not the server, limited the measurement. */
    saturated: boolean;
    warnings: string[];
    /** Generator CPU (user + system, all threads) per completed request, µs. */
    cpuPerRequestUs?: number;
  };
  /** Set when the run was stopped before its planned end (AbortSignal, Ctrl-C); the numbers cover what was measured. */
  stoppedEarly?: { reason: string };
  /** Outcome of each setup request, sent once in order before warm-up. */
  setup?: SetupOutcome[];
}

export interface SetupOutcome {
  method: string;
  path: string;
  /** HTTP status, when a response came back. */
  status?: number;
  /** errno, `timeout`, `parse` or `EOF`, when none did. */
  error?: string;
}
