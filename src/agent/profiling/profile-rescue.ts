// Rescues what the agent worker is doing with the main thread's inspector when the target
// dies of an uncaught exception or calls process.exit(): a running profile, which the worker
// would take with it, and a stall's sampling session, which left connected made Node print
// "Waiting for the debugger to disconnect..." into the target's stderr. 'exit' handlers still
// run while the worker is alive, so the main thread's asks the worker to finish (write the
// profile; end the stall, with its cause, at the exit) and blocks (bounded) on a shared flag
// until it has. While the main thread waits in Atomics.wait, V8 still serves the worker
// session's inspector messages (Profiler.stop) through interrupts: verified on Node 20, 22
// and 24. Only when a profile or a stall's sampling runs: otherwise an exit is not delayed.
//
//   main thread, process 'exit'                    agent worker
//     busy? ── no ──▶ exit as before
//      │ yes
//     postMessage(RESCUE_PROFILES) ──────────────▶  stop the watchdog, Profiler.stop (answered
//     Atomics.wait(done, ≤ PROFILE_RESCUE_WAIT_MS)   by the waiting main isolate), write the file,
//                 ◀──────────────── notify(done) ─   send `profile` and `stall`, done once the bytes left
//     last sample, bye

/** How long an exiting main thread waits for its profile to be written. */
export const PROFILE_RESCUE_WAIT_MS = 2000;
/** Main thread -> worker, from the 'exit' handler. */
export const RESCUE_PROFILES = 'hotpath:rescue-profiles';

const BUSY = 0;
const DONE = 1;
/**
 * What keeps the worker busy with the main thread's inspector, bits of the BUSY cell; and a stall
 * under way that is not sampled (yet: the thread seemed kept off the cores), whose final report
 * the exit must wait for all the same; the profiler's priming at listen (its session is
 * disconnected by the rescue: profiler-prime.ts).
 */
const BUSY_BITS = { profile: 1, stall: 2, stallUnderWay: 4, prime: 8 } as const;
export type RescueWork = keyof typeof BUSY_BITS;

/** Two Int32 cells shared by the main thread and its agent worker. */
export class ProfileRescueFlag {
  private readonly cells: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(8)) {
    this.cells = new Int32Array(buffer);
  }

  /** Worker: a profile runs or is being written, or a stall's sampling session is connected. */
  setBusy(work: RescueWork, busy: boolean): void {
    if (busy) Atomics.or(this.cells, BUSY, BUSY_BITS[work]);
    else Atomics.and(this.cells, BUSY, ~BUSY_BITS[work]);
  }

  get busy(): boolean {
    return Atomics.load(this.cells, BUSY) !== 0;
  }

  /** Worker: the rescued profiles are written and announced. */
  markDone(): void {
    Atomics.store(this.cells, DONE, 1);
    Atomics.notify(this.cells, DONE);
  }

  /** Main thread: blocks until markDone() or `timeoutMs`; true when done. */
  waitDone(timeoutMs: number): boolean {
    return Atomics.wait(this.cells, DONE, 0, timeoutMs) !== 'timed-out';
  }
}

/**
 * Main thread, in its process 'exit' handler: when a profile or a stall's sampling runs, has
 * the worker finish it and waits for that (bounded). Returns at once otherwise.
 */
export function rescueProfilesAtExit(
  worker: { threadId: number; postMessage(value: unknown): void },
  flag: ProfileRescueFlag,
  timeoutMs = PROFILE_RESCUE_WAIT_MS,
): boolean {
  // threadId is -1 once the worker is known to have exited: nobody would answer.
  if (!flag.busy || worker.threadId === -1) return false;
  worker.postMessage(RESCUE_PROFILES);
  return flag.waitDone(timeoutMs);
}
