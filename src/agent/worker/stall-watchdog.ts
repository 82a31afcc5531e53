// Watches the main thread's heartbeat (a Float64 in a SharedArrayBuffer the main thread
// rewrites every HEARTBEAT_MS) from the agent worker. When heartbeats stop for
// STALL_THRESHOLD_MS it sends `stall` (ongoing) itself, repeats every ONGOING_EVERY_MS, and
// sends the final duration (with the hottest stacks) once the main thread beats again.
//
//   main thread:  beat ─ beat ─ beat ─ [ blocked 2 s ............ ] ─ beat
//   agent worker:        check  check  check ─ stall(ongoing) ─ stall(ongoing) ─ stall(final)
import type { StallMessage } from '../protocol.js';
import { epochNow } from '../clock.js';
import type { StallCause } from './stall-cause.js';

/** The heartbeat period; the sampler's own tick writes it when the interval is this short. */
export const HEARTBEAT_MS = 100;
export const STALL_THRESHOLD_MS = 250;
export const ONGOING_EVERY_MS = 500;
/** Every wakeup costs CPU (≈ 0.1 ms each on a busy VM): the check runs at the heartbeat's pace. */
const CHECK_MS = 100;

type StallBody = Omit<StallMessage, 'v' | 'pid' | 'threadId' | 't'>;

export class StallWatchdog {
  private readonly beat: Float64Array;
  private stall: { start: number; lastSent: number } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(heartbeat: SharedArrayBuffer, private readonly send: (body: StallBody) => void, private readonly cause?: StallCause) {
    this.beat = new Float64Array(heartbeat);
  }

  start(): void {
    this.timer ??= setInterval(() => this.check(), CHECK_MS);
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private check(): void {
    const last = this.beat[0];
    if (last === 0) return;
    const now = epochNow();
    const stall = this.stall;
    if (stall === undefined) {
      if (now - last < STALL_THRESHOLD_MS) return;
      this.stall = { start: last, lastSent: now };
      this.send({ type: 'stall', start: last, durationMs: round(now - last), ongoing: true });
      this.cause?.start();
      return;
    }
    if (last > stall.start) return this.finish(stall.start, last);
    if (now - stall.lastSent >= ONGOING_EVERY_MS) {
      stall.lastSent = now;
      this.send({ type: 'stall', start: stall.start, durationMs: round(now - stall.start), ongoing: true });
    }
  }

  private finish(start: number, resumed: number): void {
    this.stall = undefined;
    const body: StallBody = { type: 'stall', start, durationMs: round(resumed - start), ongoing: false };
    if (this.cause === undefined) return this.send(body);
    this.cause.stop((cause) => {
      if (cause !== undefined) body.cause = cause;
      this.send(body);
    });
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
