// V8's profiler primed once, at listen, in a run that will ask for a CPU profile: a profile
// started and stopped at once through its own session, its result dropped. Each start of a CPU
// profiler (V8's ProfilingScope) has V8 walk the heap and collect the source positions of every
// function compiled without them, by parsing it again (CollectSourcePositionsForAllBytecodeArrays);
// while a profile runs, new functions get theirs as they are compiled. `node --cpu-prof` starts
// before any code is compiled and never pays for this; a profile started at the beginning of the
// load window paid for all the app's code in the window: 2-7 % of the CPU per request of a 4 s
// window on the overhead server (docs/agent.md, "The profiler's first start"). Paid at listen,
// the window's start finds only what was compiled since (the warm-up's, a few request handlers).
// Collected positions stay, so the primer's profile stops at once. The main thread is held while
// V8 does this (tens of ms on a large app): the stall watchdog is told it is the agent's work.
import type { Session } from 'node:inspector';
import { endProfilerSession } from './coverage-hold.js';

export class ProfilerPrime {
  private session: Session | undefined;

  constructor(
    private readonly connect: () => Session,
    private readonly samplingIntervalUs: number,
    private readonly onError: (what: string, err: unknown) => void,
    /** True when the prime is sent (the main thread may be held), false once V8 answered its stop. */
    private readonly onBusy: (busy: boolean) => void,
  ) {}

  /** Starts and stops one profile; nothing is written or sent. */
  start(): void {
    if (this.session !== undefined) return;
    let s: Session;
    try {
      s = this.connect();
    } catch (err) {
      return this.onError('profiler-prime', err);
    }
    this.session = s;
    this.onBusy(true);
    // After cancel(), node fails the requests still pending (the session closed): not an error.
    const fail = (err: Error | null): void => {
      if (err && this.session === s) this.onError('profiler-prime', err);
    };
    try {
      s.post('Profiler.enable', fail);
      s.post('Profiler.setSamplingInterval', { interval: this.samplingIntervalUs }, fail);
      s.post('Profiler.start', fail);
      s.post('Profiler.stop', (err) => {
        fail(err);
        this.end();
      });
    } catch (err) {
      this.onError('profiler-prime', err);
      this.end();
    }
  }

  /** Disconnects at once (the process is exiting): whatever V8 still had to do is dropped. */
  cancel(): void {
    this.end();
  }

  get busy(): boolean {
    return this.session !== undefined;
  }

  private end(): void {
    const s = this.session;
    if (s === undefined) return;
    this.session = undefined;
    endProfilerSession(s);
    this.onBusy(false);
  }
}
