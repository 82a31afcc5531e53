// Event-loop delay: how late an unref'd interval timer fires, recorded per sample interval in a
// small plain-JS histogram. It replaces perf_hooks.monitorEventLoopDelay, whose histogram
// covers 1 ns to an hour at 3 significant digits (≈ 340 KB of counts): its mean and every
// percentile walk those counts, so summarising it each interval swept the serving core's L2
// cache ten times a second, which cost a JSON server 1.4 % of its throughput (docs/agent.md,
// Cost). Here a sample reads a LogHistogram that stops at its highest used bucket.
//
// Like monitorEventLoopDelay, a delay is the time between two consecutive fires minus the
// timer's period, so an idle loop reads ≈ 0 and one long block shows as one long delay.
// The same timer carries the thread's other periodic work (start's `ticks`: the sample, the GC
// observation windows, the growth report): one wakeup serves them all.
import { performance } from 'node:perf_hooks';
import type { HistogramSummary } from '../protocol.js';
import { originalClearInterval, originalSetInterval } from '../originals.js';
import { timed, timedEvery } from '../own-time.js';
import { summarize } from './histogram-summary.js';
import { LogHistogram } from './log-histogram.js';

/**
 * The timer's period, ms: delays are measured with this resolution, two per default sample
 * interval. Each fire wakes node's timer machinery with cold caches on a busy core: sampled
 * with perf on the overhead server, timer work was 1.27 % of its samples at 10 ms and 0.86 % at
 * 20 ms; on an idle server at load average 16 the 20 ms timer was 5 of the agent's 8.5 ms of
 * main-thread CPU a second (≈ 100 µs a wakeup). Blocking is judged from 100 ms up, and the
 * stall watchdog times long blocks on its own.
 */
export const LOOP_DELAY_RESOLUTION_MS = 50;

/**
 * A callback run on the delay timer every `every` periods of it, after the delay is recorded:
 * at the first fire once that much time has passed since its last run (by the clock, not by
 * counting fires: a loop blocked for 400 ms at a time fires once per block, and a tick counted
 * in fires would then come 8 times too rarely — a growth report every 20 fires came once in a
 * 5 s load and the listener leak it carries went unseen).
 */
export interface LoopTick {
  every: number;
  fn: () => void;
}

/**
 * The tick that runs every `intervalMs` on the delay timer, or undefined when `intervalMs` is
 * not a whole number of its periods (the caller then keeps a timer of its own).
 */
export function loopTick(intervalMs: number, fn: () => void): LoopTick | undefined {
  const every = intervalMs / LOOP_DELAY_RESOLUTION_MS;
  return Number.isInteger(every) && every >= 1 ? { every, fn } : undefined;
}

/** Called around a fire's due ticks (only when one is due): the connection's hold and release, one write per fire. */
export interface TickBatch {
  before(): void;
  after(): void;
}

export class LoopDelay {
  /** Delays in µs. */
  private readonly delays = new LogHistogram();
  private timer: NodeJS.Timeout | undefined;
  private last = 0;

  /**
   * `ticks`: also run each `tick.fn` every `tick.every` periods (see LoopTick), in order, after
   * the delay is recorded, so the thread wakes once for all. Each is timed apart as the agent's
   * own time (own-time.ts, by its caller): timed together, one call in N would always land on
   * the same kind of fire. `batch` runs around the ticks of a fire that has any due.
   */
  start(ticks: readonly (LoopTick | undefined)[] = [], batch?: TickBatch): void {
    if (this.timer !== undefined) return;
    this.last = performance.now();
    const record = timed(() => this.fired(), timedEvery(LOOP_DELAY_RESOLUTION_MS));
    const due = ticks.filter((t): t is LoopTick => t !== undefined);
    // Due half a period early: a fire a little early on the libuv millisecond clock still counts.
    const spacing = due.map((t) => (t.every - 0.5) * LOOP_DELAY_RESOLUTION_MS);
    const ran = due.map(() => this.last);
    this.timer = originalSetInterval(() => {
      record();
      const now = this.last;
      let batched = false;
      try {
        for (let i = 0; i < due.length; i++) {
          if (now - ran[i] < spacing[i]) continue;
          ran[i] = now;
          if (!batched && batch !== undefined) {
            batched = true;
            batch.before();
          }
          due[i].fn();
        }
      } finally {
        if (batched) batch?.after();
      }
    }, LOOP_DELAY_RESOLUTION_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) originalClearInterval(this.timer);
    this.timer = undefined;
  }

  /** The delays since the last call, ms, then reset. */
  take(): HistogramSummary {
    const summary = summarize(this.delays, 1e-3);
    this.delays.reset();
    return summary;
  }

  private fired(): void {
    const now = performance.now();
    const lateUs = (now - this.last - LOOP_DELAY_RESOLUTION_MS) * 1000;
    this.last = now;
    // A fire a little early on the libuv millisecond clock counts as no delay.
    this.delays.record(lateUs < 0 ? 0 : Math.round(lateUs));
  }
}
