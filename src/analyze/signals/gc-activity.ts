// GC activity of some threads over a window, from what the agent sends: the GCs its `gc`
// observer saw while it was on (observation windows: each sample's `gc.observedMs`) and every
// full GC with the heap it left (counted by a canary, observed or not). Totals over the whole
// window are the observed ones scaled to the time observed. Runs recorded by an agent that
// observed all the time (samples without `gc`) read as fully observed. The analyzers, the
// report's summary and its timeline all estimate GC time here, so they agree.

import type { GcEvent, SampleMessage } from '../../agent/protocol.js';
import type { RunData, ThreadTelemetry } from '../../run-dir/run-data.js';
import { perRun } from '../../run-dir/per-run.js';
import { loadWindow, targetThreads, windowGc, windowSamples, type Window } from './load-window.js';
import { round } from './stats.js';

export interface KindTotals {
  count: number;
  totalMs: number;
}

export interface GcActivity {
  /** The GCs observed in the window. */
  events: GcEvent[];
  /** Time covered by the threads' samples in the window, ms (the wall time of each thread, summed). */
  sampledMs: number;
  /** Of it, the time the GC observer was on, ms. */
  observedMs: number;
  /** observedMs / sampledMs (1 for runs that observed all the time). */
  coverage: number;
  /** Observed GCs and their time, by kind. */
  observed: Record<string, KindTotals>;
  /** GC time over the whole window, estimated from the observed time, ms. */
  estimatedMs: number;
  /** GCs over the whole window, estimated by kind (observed counts scaled to the whole time). */
  estimated: Record<string, KindTotals>;
  /** Their number, all kinds. */
  estimatedCount: number;
  /** Full GCs in the window: counted by the canary when the agent sent it, else the observed ones. */
  fullGcs: number;
  /** The heap used after each full GC, in time order (the canary's readings, else observed majors'). */
  heapAfterFull: { t: number; bytes: number }[];
}

/**
 * The target threads' GC activity over the load window, computed once per run: gc-pressure, the
 * healthy finding and report.json's summary read the same figures.
 */
export const loadGcActivity: (run: RunData) => GcActivity = perRun((run) => gcActivity(targetThreads(run), loadWindow(run)));

export function gcActivity(threads: readonly ThreadTelemetry[], w: Window | null): GcActivity {
  const events: GcEvent[] = [];
  let sampledMs = 0;
  let observedMs = 0;
  let counted = 0;
  let fullGcs = 0;
  const heapAfterFull: { t: number; bytes: number }[] = [];
  for (const thread of threads) {
    const samples = windowSamples(thread, w);
    const own = windowGc(thread, w);
    for (const e of own) events.push(e); // a long run has more GCs than a call has arguments
    const withGc = samples.filter((s): s is SampleMessage & { gc: NonNullable<SampleMessage['gc']> } => s.gc !== undefined);
    for (const s of samples) sampledMs += s.intervalMs;
    if (withGc.length > 0) {
      counted++;
      for (const s of samples) observedMs += s.gc ? Math.min(s.gc.observedMs, s.intervalMs) : s.intervalMs;
      for (const s of withGc) {
        fullGcs += s.gc.full;
        for (const p of s.gc.heapAfterFull ?? []) if (!w || (p.t >= w.start && p.t <= w.end)) heapAfterFull.push(p);
      }
    } else {
      for (const s of samples) observedMs += s.intervalMs;
      const majors = own.filter((e) => e.kind === 'major');
      fullGcs += majors.length;
      for (const e of majors) if (e.heapAfter !== undefined) heapAfterFull.push({ t: e.start + e.durationMs, bytes: e.heapAfter });
    }
  }
  // Without samples (a synthetic run of events only) the events stand for the whole time.
  if (sampledMs === 0) {
    sampledMs = observedMs = w?.durationMs ?? 0;
  }
  const coverage = sampledMs > 0 ? Math.min(1, observedMs / sampledMs) : 1;
  const scale = coverage > 0 ? 1 / coverage : 1;
  const observed = byKind(events);
  const estimated: Record<string, KindTotals> = {};
  for (const [kind, k] of Object.entries(observed)) estimated[kind] = { count: Math.round(k.count * scale), totalMs: k.totalMs * scale };
  // Full GCs are counted, not estimated, when the canary counted them (their time is their
  // count times the mean of those observed, or unknown when none was).
  if (counted > 0 && (fullGcs > 0 || observed.major)) {
    const major = observed.major;
    estimated.major = { count: fullGcs, totalMs: major && major.count > 0 ? (fullGcs * major.totalMs) / major.count : 0 };
  }
  heapAfterFull.sort((a, b) => a.t - b.t);
  return {
    events,
    sampledMs,
    observedMs,
    coverage,
    observed,
    estimated,
    estimatedMs: Object.values(estimated).reduce((a, k) => a + k.totalMs, 0),
    estimatedCount: Object.values(estimated).reduce((a, k) => a + k.count, 0),
    fullGcs: counted > 0 ? fullGcs : (observed.major?.count ?? 0),
    heapAfterFull,
  };
}

function byKind(events: readonly GcEvent[]): Record<string, KindTotals> {
  const out: Record<string, KindTotals> = {};
  for (const e of events) {
    const k = (out[e.kind] ??= { count: 0, totalMs: 0 });
    k.count++;
    k.totalMs += e.durationMs;
  }
  return out;
}

/** Totals by kind with times rounded to 0.01 ms, as findings and report.json show them. */
export function roundKinds(kinds: Record<string, KindTotals>): Record<string, KindTotals> {
  return Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, { count: v.count, totalMs: round(v.totalMs, 2) }]));
}
