// Every GC of this thread's isolate: kind, flags and duration from the `gc` PerformanceObserver,
// and for the non-minor GCs (major, incremental marking, weak callbacks) the heap used after
// them, read with v8.getHeapStatistics() when the observer delivers them (a few ms later at
// most: what the app allocated since is counted in). Heap after major GCs is what leak
// detection uses. v8.GCProfiler would give exact before/after figures, but it writes a
// JSON record on every GC, scavenges included (often 100+ a second under load): it cost the
// server ≈ 1 % of its CPU per request on its own (measured, see docs/agent.md). Batched: the
// sampler takes the events once per interval. Bounded per interval.
import { PerformanceObserver, performance, constants, type PerformanceEntry } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import type { GcEvent, GcKind } from '../protocol.js';

/** More GCs than this in one interval are counted but not listed. */
export const MAX_GC_EVENTS_PER_INTERVAL = 2000;

export class GcCollector {
  dropped = 0;
  private events: GcEvent[] = [];
  private observer: PerformanceObserver | undefined;

  start(): void {
    this.observer = new PerformanceObserver((list) => {
      try {
        this.onEntries(list.getEntries());
      } catch {
        // An observer callback that throws would reach the target as an uncaught exception.
      }
    });
    this.observer.observe({ entryTypes: ['gc'] });
  }

  stop(): void {
    this.observer?.disconnect();
    this.observer = undefined;
  }

  /** GCs observed since the last call. */
  take(): GcEvent[] {
    const events = this.events;
    this.events = [];
    return events;
  }

  private onEntries(entries: PerformanceEntry[]): void {
    let lastNonMinor: GcEvent | undefined;
    let lastMajor: GcEvent | undefined;
    for (const e of entries) {
      if (this.events.length >= MAX_GC_EVENTS_PER_INTERVAL) {
        this.dropped++;
        continue;
      }
      const detail = (e as { detail?: { kind?: number; flags?: number } }).detail;
      const ev: GcEvent = {
        kind: kindOf(detail?.kind ?? 0),
        start: performance.timeOrigin + e.startTime,
        durationMs: Math.round(e.duration * 1000) / 1000,
        flags: detail?.flags ?? 0,
      };
      if (ev.kind !== 'minor') lastNonMinor = ev;
      if (ev.kind === 'major') lastMajor = ev;
      this.events.push(ev);
    }
    // One read per delivery, given to its last major GC (what leak detection trends; a weak-callback
    // pass or incremental step delivered after it frees next to nothing), else its last non-minor GC.
    const target = lastMajor ?? lastNonMinor;
    if (target !== undefined) target.heapAfter = v8.getHeapStatistics().used_heap_size;
  }
}

function kindOf(kind: number): GcKind {
  if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) return 'major';
  if (kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) return 'incremental';
  if (kind === constants.NODE_PERFORMANCE_GC_WEAKCB) return 'weakcb';
  return 'minor';
}
