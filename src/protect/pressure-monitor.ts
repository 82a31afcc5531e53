// The shared core of hotpath/protect: samples event-loop delay, utilization and memory on
// unref'd timers and keeps the shed decision cheap: a field read for the window signals, one
// clock read for the delay signal.
//
// Why the delay signal is not "p99 of the last window > threshold": a window-level verdict
// sheds every request of the next window, so under steady overload the server alternates
// between a full queue and an empty one and goodput halves. Instead each request is judged by
// how long it can have waited (WaitGate: time since the loop last looked for new requests,
// idle time and 503-writing time left out), and shed when that is over the limit. A served
// request has therefore waited at most about the limit plus one service time.
// The window p99 (resolution subtracted) is still measured and reported in status(), and a
// tick later than the limit starts the hysteresis hold when recoveryTime is set.
// Time spent writing 503s is left out of the lateness (the gate keeps it): otherwise, on a starved
// core where a 503 costs a millisecond, shedding a backlog makes the loop late, which sheds
// the next backlog, and the guard locks the server out of all useful work.

import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';
import type { PressureReason, ResolvedProtectOptions } from './protect-options.js';
import { WaitGate } from './wait-gate.js';

export interface PressureStatus {
  /** True when a request arriving now would be shed. */
  underPressure: boolean;
  /** The signal over its threshold, or null. */
  reason: PressureReason | null;
  /** p99 event-loop delay in ms over the last sample window, timer resolution subtracted. */
  eventLoopDelay: number;
  /** How late the event loop is right now, in ms (0 when on time). */
  eventLoopDelayNow: number;
  /** Share of the last sample window the event loop was busy, 0..1 (per window, not cumulative). */
  eventLoopUtilization: number;
  heapUsedBytes: number;
  rssBytes: number;
  /** Requests shed since the guard was created. */
  shed: number;
  /** Epoch ms of the end of the last sample window (0 before the first). */
  sampledAt: number;
}

type WindowSignal = Exclude<PressureReason, 'eventLoopDelay'>;

export class PressureMonitor {
  /** Requests shed so far (counted by the guard). */
  shed = 0;
  private readonly gate = new WaitGate();
  private readonly opts: ResolvedProtectOptions;
  private readonly histogram: IntervalHistogram;
  private readonly tickTimer: NodeJS.Timeout;
  private readonly windowTimer: NodeJS.Timeout;
  /** When the delay tick last ran, on performance.now()'s clock. */
  private lastTick: number;
  /** A window signal over its threshold, or any signal held by hysteresis. */
  private held: PressureReason | null = null;
  /** With hysteresis: since when (performance.now()) the held signal stayed low, or -1. */
  private lowSince = -1;
  private maxLate = 0;
  private prevElu: EventLoopUtilization;
  private closed = false;
  /** maxEventLoopDelay, or 0 once closed. */
  private delayLimit: number;
  private figures = { eventLoopDelay: 0, eventLoopUtilization: 0, heapUsedBytes: 0, rssBytes: 0, sampledAt: 0 };

  constructor(opts: ResolvedProtectOptions) {
    this.opts = opts;
    this.delayLimit = opts.maxEventLoopDelay;
    this.histogram = monitorEventLoopDelay({ resolution: opts.resolution });
    this.histogram.enable();
    this.prevElu = performance.eventLoopUtilization();
    this.lastTick = performance.now();
    this.tickTimer = setInterval(this.tick, opts.resolution).unref();
    this.windowTimer = setInterval(this.sampleWindow, opts.sampleInterval).unref();
    this.readMemory();
  }

  /** The per-request decision: why the request being handled now should be shed, or null. */
  admit(): PressureReason | null {
    if (this.held !== null) return this.held;
    const limit = this.delayLimit;
    return limit > 0 && this.gate.over(limit, performance.now()) ? 'eventLoopDelay' : null;
  }

  /** Would a request handled now be shed? Outside the request path (does not mark the loop turn). */
  check(): PressureReason | null {
    if (this.held !== null) return this.held;
    const limit = this.delayLimit;
    return limit > 0 && this.gate.peekOver(limit, performance.now()) ? 'eventLoopDelay' : null;
  }

  /** Time spent answering a shed request: never counted as waiting or as lateness. */
  addShedTime(ms: number): void {
    this.gate.addShedTime(ms);
  }

  status(): PressureStatus {
    const reason = this.check();
    const late = this.closed ? 0 : Math.max(0, performance.now() - this.lastTick - this.opts.resolution - this.gate.shedSinceTick());
    return { underPressure: reason !== null, reason, eventLoopDelayNow: round(late), shed: this.shed, ...this.figures };
  }

  /** Stops sampling; afterwards nothing is shed. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.tickTimer);
    clearInterval(this.windowTimer);
    this.gate.close();
    this.histogram.disable();
    this.held = null;
    this.delayLimit = 0;
  }

  /** Every `resolution` ms: how late did this tick fire? */
  private readonly tick = (): void => {
    const now = performance.now();
    const late = now - this.lastTick - this.opts.resolution - this.gate.shedSinceTick();
    this.lastTick = now;
    this.gate.tick(now);
    if (late > this.maxLate) this.maxLate = late;
    const limit = this.delayLimit;
    if (limit <= 0) return;
    if (late > limit) {
      if (this.opts.recoveryTime > 0) this.hold('eventLoopDelay');
    } else if (this.held === 'eventLoopDelay') {
      this.recover(late < limit * this.opts.recoveryRatio, now);
    }
  };

  private hold(reason: PressureReason): void {
    this.held = reason;
    this.lowSince = -1;
  }

  /** Hysteresis: release the held signal once it stayed low for recoveryTime. */
  private recover(low: boolean, now: number): void {
    if (!low) {
      this.lowSince = -1;
    } else if (this.lowSince < 0) {
      this.lowSince = now;
    } else if (now - this.lowSince >= this.opts.recoveryTime) {
      this.held = null;
      this.lowSince = -1;
    }
  }

  /** Every `sampleInterval` ms: the window's delay p99, utilization and memory. */
  private readonly sampleWindow = (): void => {
    const h = this.histogram;
    const res = this.opts.resolution;
    // At least the worst lateness of our own tick: a window of ~25 samples has its p99 at its
    // maximum anyway, and the histogram may record a block's sample only in the next window
    // (or none, when the loop was blocked for the whole window).
    const p99 = h.count > 0 ? h.percentile(99) / 1e6 - res : 0;
    this.figures.eventLoopDelay = round(Math.max(0, p99, this.maxLate));
    h.reset();
    this.maxLate = 0;
    const current = performance.eventLoopUtilization();
    this.figures.eventLoopUtilization = round(performance.eventLoopUtilization(current, this.prevElu).utilization, 4);
    this.prevElu = current;
    this.readMemory();
    this.figures.sampledAt = Date.now();
    this.judgeWindow();
  };

  private readMemory(): void {
    const mem = process.memoryUsage();
    this.figures.heapUsedBytes = mem.heapUsed;
    this.figures.rssBytes = mem.rss;
  }

  private windowValue(signal: WindowSignal): [value: number, limit: number] {
    const o = this.opts;
    const f = this.figures;
    if (signal === 'eventLoopUtilization') return [f.eventLoopUtilization, o.maxEventLoopUtilization];
    if (signal === 'heapUsedBytes') return [f.heapUsedBytes, o.maxHeapUsedBytes];
    return [f.rssBytes, o.maxRssBytes];
  }

  private judgeWindow(): void {
    if (this.held === 'eventLoopDelay') return;
    const hysteresis = this.opts.recoveryTime > 0;
    if (this.held !== null && hysteresis) {
      const [value, limit] = this.windowValue(this.held);
      this.recover(value <= limit * this.opts.recoveryRatio, performance.now());
      if (this.held !== null) return;
    }
    this.held = null;
    for (const signal of ['eventLoopUtilization', 'heapUsedBytes', 'rssBytes'] as const) {
      const [value, limit] = this.windowValue(signal);
      if (limit > 0 && value > limit) {
        this.hold(signal);
        return;
      }
    }
  }
}

function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
