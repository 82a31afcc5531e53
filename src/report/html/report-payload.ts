// The data embedded in report.html (gzip + base64, decoded in the page): the contract between
// the Node side that builds it (build-payload.ts) and the prebuilt UI (src/report/ui) that
// reads it. Types only and no Node imports, so the UI type-checks against it too.
// Compact on purpose: telemetry is columnar, profiles are interned frames plus flat node arrays,
// and CPU samples are node indexes with delta-encoded times so the page can re-aggregate any
// time window.

import type { Finding } from '../../analyze/finding.js';
import type { LoadResult } from '../../load/load-result.js';
import type { Hotspot, TelemetrySummary } from '../report-schema.js';
import type { RunMeta } from '../../run-dir/schema.js';

export const PAYLOAD_VERSION = 1;

/** Frame kinds, in the order of their numeric code in `PayloadProfile.frames.kind`. */
export { FRAME_KINDS, type FrameKind as PayloadFrameKind } from '../../profile/call-tree.js';

/** A few lines of the culprit's source, read when the report was written. */
export interface SourceExcerpt {
  file: string;
  /** 1-based number of lines[0]. */
  firstLine: number;
  /** 1-based line the finding points at. */
  line: number;
  lines: string[];
}

export interface PayloadFinding extends Finding {
  excerpt?: SourceExcerpt;
}

/** One agent's telemetry as columns sharing the time column `t`. */
export interface PayloadThread {
  pid: number;
  threadId: number;
  label: string;
  isTarget: boolean;
  /** Seconds since the run started (meta.startedAt), at the end of each sample's interval. */
  t: number[];
  eldP50: number[];
  eldP99: number[];
  eldMax: number[];
  /** Event-loop utilization, percent. */
  elu: number[];
  /** CPU of the process over the interval, percent of one core. */
  cpu: number[];
  /** MB. */
  rss: number[];
  heapUsed: number[];
  heapTotal: number[];
  external: number[];
  /** Active resources (handles and requests), all types together, and the largest few by type. */
  resources: number[];
  resourcesByType: Record<string, number[]>;
  /** Server-side HTTP: requests finished per second, latency p99 (ms), open connections; null before serving. */
  httpRps: (number | null)[];
  httpP99: (number | null)[];
  openConnections: (number | null)[];
  /** GC events: start (seconds since run start), pause (ms), kind. */
  gc: { t: number[]; ms: number[]; kind: string[] };
  /** Share of the time the agent observed GCs (it does in windows of each second); absent: all of it. */
  gcCoverage?: number;
  /** Heartbeat stalls of the main thread: start (seconds since run start), duration (ms). */
  stalls: { t: number[]; ms: number[] };
}

/**
 * A profile as an interned call tree. Nodes are in pre-order (a parent precedes its children),
 * node 0 is the root. CPU profiles carry samples; heap profiles carry static self sizes.
 */
export interface PayloadProfile {
  id: string;
  kind: 'cpu' | 'heap';
  pid: number;
  threadId: number;
  label: string;
  /** Weight unit: microseconds of CPU, or bytes allocated. */
  unit: 'us' | 'bytes';
  strings: string[];
  /** Frame table, columnar. name and file index `strings`; kind indexes FRAME_KINDS; line/col 1-based, 0 unknown. */
  frames: { name: number[]; file: number[]; line: number[]; col: number[]; kind: number[] };
  /** Parent node index (-1 for the root) and frame index per node. */
  nodes: { parent: number[]; frame: number[] };
  /** Static self weight per node (heap profiles). */
  self?: number[];
  /**
   * CPU samples in time order: the sampled node, and the time since the previous sample in µs
   * (the first relative to `startSec`). A sample weighs the time until the next one; the
   * last weighs `lastWeight` µs. Long runs store samples summed per node into time slots:
   * then `w` holds each one's weight (µs) and several share a time.
   */
  samples?: { node: number[]; dt: number[]; lastWeight: number; w?: number[] };
  /** Seconds since the run started when the profile started. */
  startSec: number;
  /** Samples dropped or frames merged while building, for the record. */
  notes: string[];
}

export interface PayloadPhase {
  phase: string;
  /** Seconds since the run started. */
  start: number;
  end: number;
}

export interface ReportPayload {
  version: typeof PAYLOAD_VERSION;
  generatedAt: number;
  hotpathVersion: string;
  run: {
    dir: string;
    command: string[];
    cwd: string;
    nodeVersion?: string;
    url?: string;
    /** Epoch ms; every `t`/`start` in the payload is seconds since this instant. */
    startedAt: number;
    durationSec: number;
    outcome: RunMeta['outcome'];
  };
  phases: PayloadPhase[];
  /** The measured load window, seconds since the run started. */
  loadWindow?: { start: number; end: number };
  findings: PayloadFinding[];
  hotspots: Hotspot[];
  telemetry: TelemetrySummary | null;
  load: LoadResult | null;
  threads: PayloadThread[];
  profiles: PayloadProfile[];
  /** Problems met while reading the run or building the report. */
  warnings: string[];
  /** What the in-process agents failed to do (report.json's agentErrors); absent in older payloads. */
  agentErrors?: PayloadAgentError[];
}

/** One part of an agent that failed: report.json's agentErrors row. */
export interface PayloadAgentError {
  pid: number;
  threadId: number;
  what: string;
  message: string;
  /** In a process that served the load. */
  target: boolean;
}
