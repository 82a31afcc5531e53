// The GCs of this thread's isolate, in two layers:
//   - every full GC is seen by a canary (full-gc-canary.ts), with the heap used after it (what
//     leak detection trends);
//   - kind, flags and duration of GCs come from the `gc` PerformanceObserver, in observation
//     windows. Node's GC tracking costs the server at every GC (always on, it cost a JSON server
//     2.4 % of its throughput at ~120 scavenges a second; docs/agent.md, Cost), so it is on for a
//     slice of every second sized to see about GC_EVENTS_PER_SECOND GCs at the rate the last
//     window saw: all of the second when GCs are rarer than that. Each sample says how long it
//     was on (`gc.observedMs`), so GC time and rates are estimated over the whole time
//     (analyze/signals/gc-activity.ts).
// Events are batched: the sampler takes them once per interval. Bounded per interval.
// The windows ride on the loop-delay timer when the thread agent drives them (start's
// `driverMs`: nextPeriod every GC_WINDOW_PERIOD_MS, driverFired at every fire, a window closed at
// the fire nearest its end), so they wake the thread no more than it already is; else on timers
// of their own.
import { PerformanceObserver, performance, constants, type PerformanceEntry } from 'node:perf_hooks';
import type { GcEvent, GcKind, SampleGc } from '../protocol.js';
import { originalClearInterval, originalClearTimeout, originalSetTimeout, unrefInterval } from '../originals.js';
import { ownTime, timed } from '../own-time.js';
import { FullGcCanary } from './full-gc-canary.js';

/** More GCs than this in one interval are counted but not listed. */
export const MAX_GC_EVENTS_PER_INTERVAL = 2000;
/** Observation windows open at the start of every period of this length. */
export const GC_WINDOW_PERIOD_MS = 1000;
/** GCs a window is sized to observe, at the rate the last window saw. */
export const GC_EVENTS_PER_SECOND = 10;
/** The shortest window, so a period always shows some GCs' durations. */
export const GC_MIN_WINDOW_MS = 50;

export class GcCollector {
  dropped = 0;
  private events: GcEvent[] = [];
  private readonly canary = new FullGcCanary();
  private observer: PerformanceObserver | undefined;
  /** performance.now() when the open window opened (or was last taken); undefined while closed. */
  private openedAt: number | undefined;
  /** Observed time not yet reported, ms. */
  private observedMs = 0;
  private periodTimer: NodeJS.Timeout | undefined;
  private closeTimer: NodeJS.Timeout | undefined;
  /** The period of the timer that drives the windows (ms), when one does (start). */
  private driverMs: number | undefined;
  /** Driver fires until the open window closes (0: none due). */
  private closeIn = 0;
  private readonly timedClose = timed(() => this.close());
  /** GCs seen in the current window, and the window's observed time before now, for the rate. */
  private windowEvents = 0;
  private windowMs = 0;

  /**
   * `driverMs`: the caller calls nextPeriod() every GC_WINDOW_PERIOD_MS and driverFired() at every
   * fire of its timer of this period (the loop-delay timer); without it the windows keep timers of
   * their own.
   */
  start(driverMs?: number): void {
    if (this.observer !== undefined) return;
    this.driverMs = driverMs;
    this.canary.start();
    this.observer = new PerformanceObserver((list) => {
      const t0 = performance.now();
      try {
        this.onEntries(list.getEntries());
      } catch {
        // An observer callback that throws would reach the target as an uncaught exception.
      }
      ownTime.ms += performance.now() - t0;
    });
    // The rate is not known yet: the first window is the shortest. (Observing a whole first
    // second of a busy server left a lasting cost of ≈ 1 %: measured, docs/agent.md.)
    this.openFor(GC_MIN_WINDOW_MS);
    if (driverMs === undefined) this.periodTimer = unrefInterval(() => this.nextPeriod(), GC_WINDOW_PERIOD_MS);
  }

  /** A fire of the driving timer: closes the window due now (the one sized by the last period). */
  driverFired(): void {
    if (this.closeIn > 0 && --this.closeIn === 0) this.timedClose();
  }

  stop(): void {
    this.close();
    if (this.periodTimer !== undefined) originalClearInterval(this.periodTimer);
    if (this.closeTimer !== undefined) originalClearTimeout(this.closeTimer);
    this.periodTimer = this.closeTimer = undefined;
    this.closeIn = 0;
    this.canary.stop();
    this.observer = undefined;
  }

  /** GCs observed since the last call. */
  take(): GcEvent[] {
    const events = this.events;
    this.events = [];
    return events;
  }

  /** The interval's full GCs and how long the observer was on in it, then reset. */
  takeInterval(): SampleGc {
    this.addObserved();
    const full = this.canary.take();
    const out: SampleGc = { observedMs: Math.round(this.observedMs * 1000) / 1000, full: full.count };
    if (full.heapAfter.length > 0) out.heapAfterFull = full.heapAfter;
    this.observedMs = 0;
    return out;
  }

  /** A new period: a window sized from the GC rate the last window saw. */
  nextPeriod(): void {
    if (this.observer === undefined) return;
    if (this.closeTimer !== undefined) originalClearTimeout(this.closeTimer);
    this.closeTimer = undefined;
    this.closeIn = 0;
    this.addObserved();
    const perSecond = this.windowMs > 0 ? (this.windowEvents * 1000) / this.windowMs : 0;
    this.windowEvents = 0;
    this.windowMs = 0;
    this.openFor(
      perSecond <= GC_EVENTS_PER_SECOND
        ? GC_WINDOW_PERIOD_MS
        : Math.max(GC_MIN_WINDOW_MS, (GC_WINDOW_PERIOD_MS * GC_EVENTS_PER_SECOND) / perSecond),
    );
  }

  /**
   * Opens a window (or keeps the open one) for `ms`; a whole period stays open into the next. A
   * driven window closes at the driver's fire nearest `ms` (at least one fire later): the time it
   * was on is measured, not assumed.
   */
  private openFor(ms: number): void {
    this.open();
    if (ms >= GC_WINDOW_PERIOD_MS) return;
    if (this.driverMs !== undefined) {
      this.closeIn = Math.max(1, Math.round(ms / this.driverMs));
      return;
    }
    this.closeTimer = originalSetTimeout(this.timedClose, ms);
    this.closeTimer.unref();
  }

  private open(): void {
    if (this.observer === undefined || this.openedAt !== undefined) return;
    this.observer.observe({ entryTypes: ['gc'] });
    this.openedAt = performance.now();
  }

  private close(): void {
    const observer = this.observer;
    if (observer === undefined || this.openedAt === undefined) return;
    this.onEntries(observer.takeRecords());
    observer.disconnect();
    this.addObserved();
    this.openedAt = undefined;
  }

  /** Moves the open window's time so far into the observed totals. */
  private addObserved(): void {
    if (this.openedAt === undefined) return;
    const now = performance.now();
    this.observedMs += now - this.openedAt;
    this.windowMs += now - this.openedAt;
    this.openedAt = now;
  }

  private onEntries(entries: PerformanceEntry[]): void {
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
      this.events.push(ev);
      this.windowEvents++;
    }
  }
}

function kindOf(kind: number): GcKind {
  if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) return 'major';
  if (kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) return 'incremental';
  if (kind === constants.NODE_PERFORMANCE_GC_WEAKCB) return 'weakcb';
  return 'minor';
}
