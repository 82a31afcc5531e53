// The outcome of `hotpath run --vary`: every run with its value and figures, one row per value
// (medians over its runs), and the best value with the evidence. What vary.json holds and
// `--json` prints (docs/run.md, Experiments).

import type { MedianInterval } from '../compare/median-interval.js';
import type { RunFigures } from './run-figures.js';
import type { VarySpec } from './vary-spec.js';

export const VARY_VERSION = 1;

export interface VaryRun {
  value: string;
  /** 1-based position in the series. */
  order: number;
  runDir: string;
  /** Absent when the run has no load results. */
  figures?: RunFigures;
  /** Why the run has no figures. */
  failed?: string;
}

export interface VaryRow {
  value: string;
  /** `--max-semi-space-size=64` or `NAME=v`. */
  label: string;
  runs: number;
  /** Runs with load results. */
  measured: number;
  rps?: MedianInterval;
  p99Ms?: MedianInterval;
  /** Medians over the measured runs; absent without telemetry. */
  gcShare?: number;
  rssMaxBytes?: number;
  /** 1 = highest median throughput; absent when no run of this value was measured. */
  rank?: number;
}

export interface VaryResult {
  version: typeof VARY_VERSION;
  vary: VarySpec;
  command: string[];
  /** Runs per value. */
  repeat: number;
  runs: VaryRun[];
  /** In the order the values were given. */
  rows: VaryRow[];
  best?: {
    value: string;
    label: string;
    /** Throughput change over the runner-up, with its 95% interval when there are repeats. */
    leadOverNext?: { value: string; change?: number; low?: number; high?: number };
    /** The lead is beyond noise: its interval lies wholly above 0. */
    clear: boolean;
    /** The evidence, in words. */
    evidence: string;
  };
}
