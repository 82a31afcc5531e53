// Event-loop delay: how late an unref'd interval timer fires, recorded per sample interval in a
// small plain-JS histogram. It replaces perf_hooks.monitorEventLoopDelay, whose histogram
// covers 1 ns to an hour at 3 significant digits (≈ 340 KB of counts): its mean and every
// percentile walk those counts, so summarising it each interval swept the serving core's L2
// cache ten times a second, which cost a JSON server 1.4 % of its throughput (docs/agent.md,
// Cost). Here a sample reads a LogHistogram that stops at its highest used bucket.
//
// Like monitorEventLoopDelay, a delay is the time between two consecutive fires minus the
// timer's period, so an idle loop reads ≈ 0 and one long block shows as one long delay.
import { performance } from 'node:perf_hooks';
import type { HistogramSummary } from '../protocol.js';
import { originalClearInterval, unrefInterval } from '../originals.js';
import { summarize } from './histogram-summary.js';
import { LogHistogram } from './log-histogram.js';

/**
 * The timer's period, ms: delays are measured with this resolution. Each fire wakes node's
 * timer machinery with cold caches on a busy core: sampled with perf on the overhead server,
 * timer work was 1.27 % of its samples at 10 ms and 0.86 % at 20 ms. Blocking is judged from
 * 100 ms up, and the stall watchdog times long blocks on its own.
 */
export const LOOP_DELAY_RESOLUTION_MS = 20;

export class LoopDelay {
  /** Delays in µs. */
  private readonly delays = new LogHistogram();
  private timer: NodeJS.Timeout | undefined;
  private last = 0;

  start(): void {
    if (this.timer !== undefined) return;
    this.last = performance.now();
    this.timer = unrefInterval(() => this.fired(), LOOP_DELAY_RESOLUTION_MS);
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
