// Watches the main thread's heartbeat (a Float64 in a SharedArrayBuffer the main thread
// rewrites every HEARTBEAT_MS) from the agent worker. When heartbeats stop for
// STALL_THRESHOLD_MS it sends `stall` (ongoing) itself, repeats every ONGOING_EVERY_MS, and
// sends the final duration (with the hottest stacks) once the main thread beats again. A
// stall still under way when the run ends is sent with its stacks so far (reportUnderWay).
// A stall that overlaps the agent's own work on the main thread (V8 building the profiles
// just stopped) is marked `byAgent` and not sampled for a cause. Nor is one while the watched
// thread is kept off the cores (a busy machine, not a block): where its CPU time can be read,
// the stacks are sampled only once it has run its own code through the silence (see
// sampleIfBlocked); sampling a thread that merely waits for a core starts V8's profiler at 1 ms
// on it for nothing, which cost a server under load 13 % of its CPU per request.
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
/**
 * Agent work that begins when the main thread has already been blocked this long (ms) is not
 * what blocks it: a late heartbeat on a busy loop followed by the profiles' stop is the agent's
 * pause, a loop blocked for a second before it is the app's (and stays so while the agent works).
 */
export const BLOCKED_BEFORE_AGENT_MS = 1000;
/**
 * Every wakeup costs CPU (≈ 0.1 ms each on a busy VM), on the target's core when it is pinned, so
 * the check is timed from the heartbeat instead of at a fixed pace: while the thread beats, the
 * next check is due when the last beat would be STALL_THRESHOLD_MS old (no check before that can
 * find a stall), which with a beat every 100 ms is one check every 200 ms, not every 100; once a
 * stall is under way, every CHECK_MS (its reports, its end). The agent worker's other periodic
 * work rides on the check (start's `alsoEachCheck`).
 */
export const CHECK_MS = 100;
/** The checks' bounds while no stall is under way, ms (nextCheckMs). */
const MIN_CHECK_MS = 10;
/**
 * A heartbeat this late (ms) has the watched thread's CPU read, once per beat: the check that
 * then sees the stall knows what the thread ran since, without a file read at every check. (With
 * the checks timed from the heartbeat, few land in this span: a stall is then judged
 * FIRST_JUDGED_MS after it is found.)
 */
export const LATE_BEAT_MS = 150;
/**
 * The watched thread counts as blocked by its own code (its stacks worth sampling) once it has
 * run at least this share of the wall time since its CPU was first read without a heartbeat (the
 * preempted stalls seen at load average 20-26 got 1-4 %; a block gets all of a calm core, and its
 * fair share of a busy one: about 10 % at load average 20 on 2 cores)...
 */
export const BLOCKED_MIN_CPU_SHARE = 0.1;
/**
 * ...or at least this much CPU in all (ms): a loop that turned would have beaten long before. A
 * blocked thread on a starved machine gets its fair share of a core (a few % at load average 25
 * on 2 cores: a 2 s block still reaches this within a second); the preempted stalls seen there got
 * 1-16 ms over 100-450 ms (a backlog served once the thread ran again). Lower than the analysis's
 * line between a block and a preemption (100 ms, preempted-stall.ts): a cause too many costs one
 * profile, a cause lost costs the diagnosis.
 */
export const BLOCKED_MIN_CPU_MS = 30;
/** Two readings closer than this (ms) say nothing about the share: the next check decides. */
const MIN_JUDGED_MS = 50;
/**
 * A stall found without an earlier CPU reading (the check came when the beat was already
 * STALL_THRESHOLD_MS late, as it does when timed from the heartbeat) is judged this much later
 * (ms), not a whole CHECK_MS: its stacks are sampled about as soon as with checks every 100 ms.
 */
const FIRST_JUDGED_MS = MIN_JUDGED_MS + 10;

type StallBody = Omit<StallMessage, 'v' | 'pid' | 'threadId' | 't'>;
/** The watched thread's on-CPU time (ms) read at `at` (epoch ms). */
interface CpuReading {
  at: number;
  ms: number;
}
type AgentWork = NonNullable<StallMessage['byAgent']>;
interface Stall {
  start: number;
  lastSent: number;
  /** The agent's work it overlapped when found (not sampled while so). */
  agent?: AgentWork;
  /** Its stacks are being sampled (StallCause started). */
  sampling?: boolean;
  cause?: StallBody['cause'];
  cpuFrom?: CpuReading;
  cpuTo?: CpuReading;
}

export class StallWatchdog {
  private readonly beat: Float64Array;
  /** The stall under way; `cause`: the stacks sent with it at a flush (reportUnderWay), repeated on its later reports. */
  private stall: Stall | undefined;
  /** The watched thread's CPU read at the first check that found the beat `beat` late (LATE_BEAT_MS). */
  private late: { beat: number; cpu: CpuReading | undefined } | undefined;
  /** The next check (a timeout re-armed by each check, see nextCheckMs). */
  private timer: NodeJS.Timeout | undefined;
  /** Since when the agent has had V8 working on the main thread, if it has now, and on what. */
  private agentSince: { from: number; why: AgentWork } | undefined;
  /** The latest finished stretches of such work, epoch ms. */
  private agentDone: { from: number; to: number; why: AgentWork }[] = [];

  /**
   * `threadCpu`: the watched thread's on-CPU time so far (ms), where it can be read (see
   * own-cpu.ts watchedThreadCpu): read when a stall is seen and when it is reported, it tells a
   * thread that ran all along (a block) from one the machine kept off the CPU (preempted).
   */
  constructor(
    heartbeat: SharedArrayBuffer,
    private readonly send: (body: StallBody) => void,
    private readonly cause?: StallCause,
    private readonly threadCpu?: () => number | undefined,
    /** Hears when a stall that is not the agent's starts (true) and when its final report is sent (false). */
    private readonly onUnderWay?: (underWay: boolean) => void,
  ) {
    this.beat = new Float64Array(heartbeat);
  }

  /** The watched thread's on-CPU time now, with when it was read (epoch ms); undefined when it cannot be read. */
  private cpuNow(at: number): CpuReading | undefined {
    try {
      const ms = this.threadCpu?.();
      return ms === undefined || !Number.isFinite(ms) ? undefined : { at, ms };
    } catch {
      return undefined;
    }
  }

  /**
   * The CPU the watched thread got from the check that saw the stall to the last check that found
   * it still stalled, and over how long (ms): none of the time after it beat again is counted.
   */
  private withCpu(body: StallBody, stall: { cpuFrom?: CpuReading; cpuTo?: CpuReading }): StallBody {
    const { cpuFrom: from, cpuTo: to } = stall;
    if (!from || !to || to.at <= from.at) return body;
    body.threadCpuMs = round(Math.max(0, to.ms - from.ms));
    body.threadCpuOverMs = round(to.at - from.at);
    return body;
  }

  /** `alsoEachCheck` runs after every check: the worker's other periodic work, without a timer of its own. */
  start(alsoEachCheck?: () => void): void {
    if (this.timer !== undefined) return;
    const tick = (): void => {
      this.check();
      alsoEachCheck?.();
      // Not re-armed once stopped (stopAtExit may stop it from within the check).
      if (this.timer !== undefined) this.timer = setTimeout(tick, this.nextCheckMs());
    };
    this.timer = setTimeout(tick, CHECK_MS);
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * When the next check is due, ms from now: while no stall is under way, when the last beat
   * will be STALL_THRESHOLD_MS old, plus 1 ms for the timer's millisecond clock (at most that far off, so `alsoEachCheck` still runs a few times
   * a second); a stall just found without a CPU reading to judge it by, FIRST_JUDGED_MS; else
   * CHECK_MS.
   */
  private nextCheckMs(): number {
    const stall = this.stall;
    if (stall !== undefined)
      return !stall.agent && !stall.sampling && stall.cpuFrom !== undefined && stall.cpuTo === undefined ? FIRST_JUDGED_MS : CHECK_MS;
    const last = this.beat[0];
    if (last === 0) return CHECK_MS;
    return Math.min(STALL_THRESHOLD_MS, Math.max(MIN_CHECK_MS, Math.ceil(last + STALL_THRESHOLD_MS - epochNow()) + 1));
  }

  /**
   * The main thread is exiting (a crash or process.exit() right after a block): stops watching,
   * and a stall still under way ends now, with its cause; `done` once it is sent (or at once).
   */
  stopAtExit(done: () => void): void {
    this.stop();
    const stall = this.stall;
    if (stall === undefined) return done();
    this.finish(stall, epochNow(), done);
  }

  /**
   * The run is ending (flush) while the main thread is still stalled: it may never come back (an
   * endless loop) and be stopped blocked, so the final message would never be sent. Sends the
   * stall so far with the stacks sampled until now (still `ongoing`) and samples on for the final
   * one; `done` once sent, or after `maxWaitMs` if the blocked thread cannot answer the inspector
   * (blocked in native code: the interrupt waits for it to return to JavaScript).
   */
  reportUnderWay(maxWaitMs: number, done: () => void): void {
    const stall = this.stall;
    const cause = this.cause;
    // Not sampled (yet): a thread kept off the cores has no stacks of its own to give.
    if (stall === undefined || stall.agent || cause === undefined || !stall.sampling) return done();
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      done();
    };
    const timer = setTimeout(finish, maxWaitMs);
    const now = epochNow();
    cause.stop((stacks) => {
      if (this.stall === stall) {
        if (stall.cpuFrom) stall.cpuTo = this.cpuNow(now) ?? stall.cpuTo;
        const body = this.withCpu(
          this.mark({ type: 'stall', start: stall.start, durationMs: round(now - stall.start), ongoing: true }, now),
          stall,
        );
        if (stacks !== undefined) body.cause = stall.cause = stacks;
        this.send(body);
        stall.lastSent = epochNow();
        // Still stalled: the final message (should the loop come back) gets its cause too.
        cause.start();
      }
      finish();
    });
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
   * Work that began once the thread had been blocked for BLOCKED_BEFORE_AGENT_MS did not cause
   * it (an endless loop that outlasts the load, with the profiles stopped meanwhile).
   */
  private byAgent(start: number, end: number): AgentWork | undefined {
    const couldCause = (from: number): boolean => from < end && from - start < BLOCKED_BEFORE_AGENT_MS;
    if (this.agentSince !== undefined && couldCause(this.agentSince.from)) return this.agentSince.why;
    return this.agentDone.find((w) => couldCause(w.from) && w.to > start && w.to >= end - AGENT_SLACK_MS)?.why;
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
      const age = now - last;
      if (age < LATE_BEAT_MS) return;
      if (age < STALL_THRESHOLD_MS) {
        if (this.late?.beat !== last) this.late = { beat: last, cpu: this.cpuNow(now) };
        return;
      }
      const pre = this.late?.beat === last ? this.late.cpu : undefined;
      this.late = undefined;
      const cpuFrom = pre ?? this.cpuNow(now);
      const cpuTo = pre !== undefined ? this.cpuNow(now) : undefined;
      const started: Stall = { start: last, lastSent: now, ...(cpuFrom ? { cpuFrom } : {}), ...(cpuTo ? { cpuTo } : {}) };
      this.stall = started;
      const body = this.withCpu(this.mark({ type: 'stall', start: last, durationMs: round(now - last), ongoing: true }, now), started);
      this.send(body);
      if (body.byAgent === undefined) {
        this.onUnderWay?.(true);
        this.sampleIfBlocked(started);
      } else started.agent = body.byAgent;
      return;
    }
    if (last > stall.start) return this.finish(stall, last);
    // The profiler prime runs once at listen, before any load: a block that outlasts it is the
    // app's from then on (a loop entered while the prime held the thread on a busy machine, never
    // sampled before: no culprit for an endless loop, 1 run in 2 on Node 24). The agent's work at
    // the end of the run (profiles stopped, the post-load GC) is not taken back: a thread still
    // silent after it is most often the agent's next step or a starved thread, not the app.
    if (stall.agent === 'profiler-prime' && this.byAgent(stall.start, now) === undefined) {
      stall.agent = undefined;
      this.onUnderWay?.(true);
    }
    if (stall.cpuFrom) stall.cpuTo = this.cpuNow(now) ?? stall.cpuTo;
    if (!stall.agent && !stall.sampling) this.sampleIfBlocked(stall);
    if (now - stall.lastSent >= ONGOING_EVERY_MS) {
      stall.lastSent = now;
      // Each report replaces the last one of the same stall (read-telemetry.ts): the stacks so far go with it.
      this.send(
        this.withCpu(
          this.mark(
            {
              type: 'stall',
              start: stall.start,
              durationMs: round(now - stall.start),
              ongoing: true,
              ...(stall.cause ? { cause: stall.cause } : {}),
            },
            now,
          ),
          stall,
        ),
      );
    }
  }

  /**
   * Starts sampling the stall's stacks once the watched thread is known to run its own code
   * through the silence: it got BLOCKED_MIN_CPU_SHARE of the wall time since its CPU was first
   * read without a heartbeat, or BLOCKED_MIN_CPU_MS in all. A thread that got less was waiting for
   * a core (other processes ran); its stacks would be those of its next turn, and V8's profiler at
   * 1 ms on the loop costs it dearly: checked again at each later check. Where the thread's CPU
   * cannot be read (not Linux, a worker thread), sampling starts at once, as it always did.
   */
  private sampleIfBlocked(stall: Stall): void {
    const cause = this.cause;
    if (cause === undefined) return;
    const { cpuFrom: from, cpuTo: to } = stall;
    if (from !== undefined) {
      if (to === undefined || to.at - from.at < MIN_JUDGED_MS) return;
      const ran = to.ms - from.ms;
      if (ran < BLOCKED_MIN_CPU_MS && ran < BLOCKED_MIN_CPU_SHARE * (to.at - from.at)) return;
    }
    stall.sampling = true;
    cause.start();
  }

  private finish(stall: Stall, resumed: number, sent: () => void = () => {}): void {
    this.stall = undefined;
    const { start } = stall;
    const sampled = stall.sampling === true;
    const body = this.withCpu(this.mark({ type: 'stall', start, durationMs: round(resumed - start), ongoing: false }, resumed), stall);
    const done = (): void => {
      if (!stall.agent) this.onUnderWay?.(false);
      sent();
    };
    if (this.cause === undefined || !sampled) {
      this.send(body);
      return done();
    }
    this.cause.stop((cause) => {
      if (cause !== undefined || stall.cause !== undefined) body.cause = cause ?? stall.cause;
      this.send(body);
      done();
    });
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
