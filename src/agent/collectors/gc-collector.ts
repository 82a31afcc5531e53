// Every GC of this thread's isolate: kind, flags and duration from the `gc` PerformanceObserver,
// heap used before/after from v8.GCProfiler (restarted every interval, paired in order by kind).
// Batched: the sampler takes the events once per interval. Bounded per interval.
import { PerformanceObserver, performance, constants, type PerformanceEntry } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import type { GcEvent, GcKind } from '../protocol.js';

/** More GCs than this in one interval are counted but not listed. */
export const MAX_GC_EVENTS_PER_INTERVAL = 2000;

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
    // Restarting the profiler costs a little; with no GC this interval there is nothing to pair.
    if (this.profiler !== undefined && this.events.length > 0) {
      const out = this.profiler.stop();
      this.profiler.start();
      if (out?.statistics) for (const s of out.statistics) this.stats.push(s);
    }
    this.pair();
    const events = this.events;
    this.events = [];
    // Profiler stats with no observer entry yet are kept one interval (entries arrive later).
    if (this.stats.length > MAX_GC_EVENTS_PER_INTERVAL) this.stats = [];
    return events;
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
      if (ev.heapBefore !== undefined) continue;
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

function kindOf(kind: number): GcKind {
  if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) return 'major';
  if (kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) return 'incremental';
  if (kind === constants.NODE_PERFORMANCE_GC_WEAKCB) return 'weakcb';
  return 'minor';
}
