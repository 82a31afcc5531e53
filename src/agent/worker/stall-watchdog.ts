// Watches the main thread's heartbeat (a Float64 in a SharedArrayBuffer the main thread
// rewrites every HEARTBEAT_MS) from the agent worker. When heartbeats stop for
// STALL_THRESHOLD_MS it sends `stall` (ongoing) itself, repeats every ONGOING_EVERY_MS, and
// sends the final duration (with the hottest stacks) once the main thread beats again.
// A stall that overlaps the agent's own work on the main thread (V8 building the profiles
// just stopped) is marked `byAgent` and not sampled for a cause.
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
/** How long after the agent's work ends a block may still be counted as the agent's. */
const AGENT_SLACK_MS = HEARTBEAT_MS + 50;
/** Every wakeup costs CPU (≈ 0.1 ms each on a busy VM): the check runs at the heartbeat's pace. */
const CHECK_MS = 100;

type StallBody = Omit<StallMessage, 'v' | 'pid' | 'threadId' | 't'>;
type AgentWork = NonNullable<StallMessage['byAgent']>;

export class StallWatchdog {
  private readonly beat: Float64Array;
  private stall: { start: number; lastSent: number; agent?: boolean } | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Since when the agent has had V8 working on the main thread, if it has now, and on what. */
  private agentSince: { from: number; why: AgentWork } | undefined;
  /** The latest finished stretches of such work, epoch ms. */
  private agentDone: { from: number; to: number; why: AgentWork }[] = [];

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

  /**
   * The main thread is exiting (a crash or process.exit() right after a block): stops watching,
   * and a stall still under way ends now, with its cause; `done` once it is sent (or at once).
   */
  stopAtExit(done: () => void): void {
    this.stop();
    const stall = this.stall;
    if (stall === undefined) return done();
    this.finish(stall.start, epochNow(), !stall.agent, done);
  }

  /** The agent starts (true) or ends (false) work that blocks the main thread (stopping profiles, the post-load GC). */
  agentWork(active: boolean, why: AgentWork = 'profile-stop'): void {
    const now = epochNow();
    if (active) {
      this.agentSince ??= { from: now, why };
      return;
    }
    if (this.agentSince === undefined) return;
    this.agentDone.push({ from: this.agentSince.from, to: now, why: this.agentSince.why });
    if (this.agentDone.length > 4) this.agentDone.shift();
    this.agentSince = undefined;
  }

  /**
   * Whether a block from `start` (the last heartbeat) to `end` was the agent's: its work had
   * begun by then and was still going, or ended at most AGENT_SLACK_MS before the heartbeat
   * came back (a main thread freed by the agent beats again within one heartbeat period).
   */
  private byAgent(start: number, end: number): AgentWork | undefined {
    if (this.agentSince !== undefined && this.agentSince.from < end) return this.agentSince.why;
    return this.agentDone.find((w) => w.from < end && w.to > start && w.to >= end - AGENT_SLACK_MS)?.why;
  }

  private mark(body: StallBody, end: number): StallBody {
    const why = this.byAgent(body.start, end);
    if (why !== undefined) body.byAgent = why;
    return body;
  }

  /** How long ago the main thread last beat, ms (undefined before its first heartbeat). */
  heartbeatAgeMs(): number | undefined {
    const last = this.beat[0];
    return last === 0 ? undefined : epochNow() - last;
  }

  private check(): void {
    const last = this.beat[0];
    if (last === 0) return;
    const now = epochNow();
    const stall = this.stall;
    if (stall === undefined) {
      if (now - last < STALL_THRESHOLD_MS) return;
      this.stall = { start: last, lastSent: now };
      const body = this.mark({ type: 'stall', start: last, durationMs: round(now - last), ongoing: true }, now);
      this.send(body);
      if (body.byAgent === undefined) this.cause?.start();
      else this.stall.agent = true;
      return;
    }
    if (last > stall.start) return this.finish(stall.start, last, !stall.agent);
    if (now - stall.lastSent >= ONGOING_EVERY_MS) {
      stall.lastSent = now;
      this.send(this.mark({ type: 'stall', start: stall.start, durationMs: round(now - stall.start), ongoing: true }, now));
    }
  }

  private finish(start: number, resumed: number, sampled: boolean, sent: () => void = () => {}): void {
    this.stall = undefined;
    const body = this.mark({ type: 'stall', start, durationMs: round(resumed - start), ongoing: false }, resumed);
    if (this.cause === undefined || !sampled) {
      this.send(body);
      return sent();
    }
    this.cause.stop((cause) => {
      if (cause !== undefined) body.cause = cause;
      this.send(body);
      sent();
    });
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
