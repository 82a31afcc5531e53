// Every GC of this thread's isolate: kind, flags and duration from the `gc` PerformanceObserver,
// heap used before/after of the non-minor GCs (major, incremental marking, weak callbacks) from
// v8.GCProfiler, paired in order by kind. Reading the GCProfiler (stop, parse, restart) every
// interval under load made the server spend ~15 % more CPU per request (measured, see
// docs/agent.md), so it is read only after an interval with a non-minor GC — rare, and the
// only GCs whose heap sizes anything uses (heap after major GCs: leak detection) — or once it
// has run GC_PROFILER_MAX_RUN_MS (bounds what it accumulates). Minor GCs carry no heap sizes.
// Batched: the sampler takes the events once per interval. Bounded per interval.
import { PerformanceObserver, performance, constants, type PerformanceEntry } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import type { GcEvent, GcKind } from '../protocol.js';

/** More GCs than this in one interval are counted but not listed. */
export const MAX_GC_EVENTS_PER_INTERVAL = 2000;
/** The GCProfiler is read at least this often (what it holds between reads grows with every GC). */
export const GC_PROFILER_MAX_RUN_MS = 5000;

interface ProfilerStat { gcType: string; beforeGC?: { heapStatistics?: { usedHeapSize?: number } }; afterGC?: { heapStatistics?: { usedHeapSize?: number } } }
interface GcProfilerLike { start(): void; stop(): { statistics?: ProfilerStat[] } | undefined }

const PROFILER_KIND: Record<string, GcKind> = {
  Scavenge: 'minor', MinorMarkSweep: 'minor', MinorMarkCompact: 'minor', MarkSweepCompact: 'major',
  IncrementalMarking: 'incremental', ProcessWeakCallbacks: 'weakcb',
};

export class GcCollector {
  dropped = 0;
  private events: GcEvent[] = [];
  private stats: ProfilerStat[] = [];
  private observer: PerformanceObserver | undefined;
  private profiler: GcProfilerLike | undefined;
  private profilerSince = 0;

  start(): void {
    this.observer = new PerformanceObserver((list) => {
      try {
        this.onEntries(list.getEntries());
      } catch {
        // An observer callback that throws would reach the target as an uncaught exception.
      }
    });
    this.observer.observe({ entryTypes: ['gc'] });
    const Ctor = (v8 as unknown as { GCProfiler?: new () => GcProfilerLike }).GCProfiler;
    if (Ctor !== undefined) {
      this.profiler = new Ctor();
      this.profiler.start();
      this.profilerSince = performance.now();
    }
  }

  stop(): void {
    this.observer?.disconnect();
    this.observer = undefined;
    this.profiler?.stop();
    this.profiler = undefined;
  }

  /** GCs observed since the last call, with heap sizes where the profiler had them. */
  take(): GcEvent[] {
    if (this.profiler !== undefined && this.events.length > 0) this.readProfiler();
    this.pair();
    const events = this.events;
    this.events = [];
    // Profiler stats with no observer entry yet are kept one interval (entries arrive later).
    if (this.stats.length > MAX_GC_EVENTS_PER_INTERVAL) this.stats = [];
    return events;
  }

  private readProfiler(): void {
    const now = performance.now();
    if (now - this.profilerSince < GC_PROFILER_MAX_RUN_MS && !this.events.some((e) => e.kind !== 'minor')) return;
    const out = this.profiler!.stop();
    this.profiler!.start();
    this.profilerSince = now;
    if (out?.statistics) for (const s of out.statistics) if (isPaired(PROFILER_KIND[s.gcType])) this.stats.push(s);
  }

  private onEntries(entries: PerformanceEntry[]): void {
    for (const e of entries) {
      if (this.events.length >= MAX_GC_EVENTS_PER_INTERVAL) {
        this.dropped++;
        continue;
      }
      const detail = (e as { detail?: { kind?: number; flags?: number } }).detail;
      this.events.push({
        kind: kindOf(detail?.kind ?? 0),
        start: performance.timeOrigin + e.startTime,
        durationMs: Math.round(e.duration * 1000) / 1000,
        flags: detail?.flags ?? 0,
      });
    }
  }

  /** Attaches heap before/after to events in order, skipping profiler stats whose kind differs. */
  private pair(): void {
    let si = 0;
    for (const ev of this.events) {
      if (ev.heapBefore !== undefined || !isPaired(ev.kind)) continue;
      while (si < this.stats.length && PROFILER_KIND[this.stats[si].gcType] !== ev.kind) si++;
      if (si >= this.stats.length) break;
      const s = this.stats[si++];
      const before = s.beforeGC?.heapStatistics?.usedHeapSize;
      const after = s.afterGC?.heapStatistics?.usedHeapSize;
      if (before !== undefined) ev.heapBefore = before;
      if (after !== undefined) ev.heapAfter = after;
    }
    this.stats = this.stats.slice(si);
  }
}

/** GCs that get heap sizes: all but minor ones (the profiler is not read for those). */
function isPaired(kind: GcKind | undefined): boolean {
  return kind !== undefined && kind !== 'minor';
}

function kindOf(kind: number): GcKind {
  if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) return 'major';
  if (kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) return 'incremental';
  if (kind === constants.NODE_PERFORMANCE_GC_WEAKCB) return 'weakcb';
  return 'minor';
}
