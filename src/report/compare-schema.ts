// The shape of compare.json (what `hotpath compare <before> <after>` finds, the object `--json`
// prints: docs/compare.md) and of compare.html's differential tree. Declared here, beside
// report-schema.ts, because the report's page machinery draws compare.html; src/compare/ builds
// them. Changes are relative (after / before - 1) unless named otherwise; per-request figures are
// in µs of CPU per completed request.

import type { Culprit, Severity } from '../analyze/finding.js';

export const COMPARISON_VERSION = 1;

export type Verdict = 'better' | 'worse' | 'no significant difference' | 'not enough data';

/** One measured figure before and after, with whether the change is real. */
export interface MetricChange {
  name: string;
  unit: string;
  before: number;
  after: number;
  /** after / before - 1; absent when before is 0. */
  change?: number;
  /** 95% bootstrap interval of the change, over the runs' per-second values (src/compare/bootstrap-change.ts); absent without them. */
  interval?: { low: number; high: number };
  /** Significant when the whole interval lies beyond ±minEffect; figures without an interval get no verdict. */
  verdict?: Verdict;
}

export interface FunctionChange {
  function: string;
  file: string;
  kind: string;
  /** Attributed self and total CPU time per completed request, µs; 0 when absent from the run. */
  selfBeforeUs: number;
  selfAfterUs: number;
  totalBeforeUs: number;
  totalAfterUs: number;
  /** selfAfterUs - selfBeforeUs. */
  selfChangeUs: number;
  status: 'changed' | 'appeared' | 'vanished';
}

export interface FindingChange {
  code: string;
  title: string;
  culprit?: Culprit;
  severityBefore?: Severity;
  severityAfter?: Severity;
}

export interface Comparison {
  version: typeof COMPARISON_VERSION;
  before: { runDir: string; command: string[]; url?: string; requests: number; durationMs: number };
  after: { runDir: string; command: string[]; url?: string; requests: number; durationMs: number };
  /** The smallest relative change called real (the noise margin), 0..1. */
  minEffect: number;
  /** Throughput and latency percentiles. */
  load: MetricChange[];
  /**
   * The share of its busy time each run's saturated event loop spent on a CPU, when both runs
   * measured it (src/compare/loop-cpu-share.ts): the tested load figures' intervals and verdicts
   * are then judged at equal share (the after run's seconds scaled by before / after).
   */
  machine?: { loopCpuShareBefore: number; loopCpuShareAfter: number };
  /** Per function, app code first then by the size of the change; absent without both CPU profiles. */
  functions?: FunctionChange[];
  findings: { resolved: FindingChange[]; new: FindingChange[]; stillPresent: FindingChange[] };
  telemetry: MetricChange[];
  /** How the runs differ in what they measured (command, load options): each makes the comparison weaker. */
  mismatches: string[];
  /** What one run lacks, and what was left out because of it. */
  missing: string[];
}

/**
 * The differential call tree compare.html draws (built by compare/diff-tree.ts): both runs' CPU
 * trees merged by call path, self CPU time per completed request before and after.
 */
export interface DiffTree {
  /** Interned frames, columnar; kind indexes FRAME_KINDS. */
  frames: { name: string[]; file: string[]; kind: number[] };
  /** Node 0 is the root ("all"); a node's parent has a smaller index. */
  parent: number[];
  /** Frame index per node; -1 for the root. */
  frame: number[];
  /** Self CPU time per completed request, µs, in each run. */
  selfBefore: number[];
  selfAfter: number[];
}
