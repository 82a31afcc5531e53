// Rescues a running profile when the target dies of an uncaught exception or calls
// process.exit(): the agent worker that drives the profiler would die with the process and
// take the profile with it. 'exit' handlers still run while the worker is alive, so the main
// thread's asks the worker to stop and write the profile, and blocks (bounded) on a shared
// flag until it has. While the main thread waits in Atomics.wait, V8 still serves the worker
// session's inspector messages (Profiler.stop) through interrupts: verified on Node 20, 22
// and 24. Only when a profile runs (or is being written): otherwise an exit is not delayed.
//
//   main thread, process 'exit'                    agent worker
//     busy? ── no ──▶ exit as before
//      │ yes
//     postMessage(RESCUE_PROFILES) ──────────────▶  stop the watchdog, Profiler.stop (answered
//     Atomics.wait(done, ≤ PROFILE_RESCUE_WAIT_MS)   by the waiting main isolate), write the file,
//                 ◀──────────────── notify(done) ─   send `profile`, done once the bytes left
//     last sample, bye

/** How long an exiting main thread waits for its profile to be written. */
export const PROFILE_RESCUE_WAIT_MS = 2000;
/** Main thread -> worker, from the 'exit' handler. */
export const RESCUE_PROFILES = 'hotpath:rescue-profiles';

const BUSY = 0;
const DONE = 1;

/** Two Int32 cells shared by the main thread and its agent worker. */
export class ProfileRescueFlag {
  private readonly cells: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(8)) {
    this.cells = new Int32Array(buffer);
  }

  /** Worker: a profile runs or is being written. */
  setBusy(busy: boolean): void {
    Atomics.store(this.cells, BUSY, busy ? 1 : 0);
  }

  get busy(): boolean {
    return Atomics.load(this.cells, BUSY) === 1;
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
 * Main thread, in its process 'exit' handler: when a profile runs, has the worker write it and
 * waits for that (bounded). Returns at once otherwise.
 */
export function rescueProfilesAtExit(
  worker: { threadId: number; postMessage(value: unknown): void }, flag: ProfileRescueFlag, timeoutMs = PROFILE_RESCUE_WAIT_MS,
): boolean {
  // threadId is -1 once the worker is known to have exited: nobody would answer.
  if (!flag.busy || worker.threadId === -1) return false;
  worker.postMessage(RESCUE_PROFILES);
  return flag.waitDone(timeoutMs);
}
