// One full GC of the main thread after the load, through the agent worker's inspector session
// (HeapProfiler.collectGarbage: V8 runs it as a task on the main thread's loop), so that the main thread's next memory reading says what the
// app still holds once the requests are gone. Under load the heap left after full GCs also
// holds the requests in flight (their bodies, queued writes): it rises with the concurrency and
// the latency like a leak does, and a short cool-down often sees no GC at all before the target
// is stopped. A leak keeps its bytes through this GC; requests in flight have released them.
//
//   worker:  flush ─ profiles written ─ scripts captured ─ collectGarbage ──▶ (answered)
//   main:                                                    [full GC]         │
//            ◀── POST_LOAD_GC {gcMs} ──────────────────────────────────────────┘
//            sample { postLoadGc: { gcMs, heapAfter } } ─▶ CLI ─ POST_LOAD_SAMPLED ─▶ worker: bye
import type { Session } from 'node:inspector';
import { disconnect } from './inspector-profiler.js';
import { epochNow } from '../clock.js';

/**
 * The GC gives up after this long (a multi-GB heap, a main thread busy with the last requests:
 * V8 runs it as a task on the main thread's loop): the end of a run does not wait longer on it.
 */
export const POST_LOAD_GC_TIMEOUT_MS = 1000;
/** Then the main thread's reading, which it takes as soon as its loop comes round after the GC. */
export const POST_LOAD_SAMPLE_WAIT_MS = 250;

/**
 * A main thread without a heartbeat for this long is stuck (a long synchronous block): it could
 * not send its reading within the step's time, so no GC is asked. A busy one (heartbeats a few
 * hundred ms apart while the last requests run) still gets it.
 */
export const POST_LOAD_STUCK_MS = 1000;

/** Worker -> main thread: the GC is done; send a sample marked `postLoadGc` now. */
export interface PostLoadGc {
  hotpathPostLoadGc: { gcMs: number };
}

/** Main thread -> worker: the post-load sample has left the process. */
export const POST_LOAD_SAMPLED = 'hotpath:post-load-sampled';

export function isPostLoadGc(v: unknown): v is PostLoadGc {
  return typeof v === 'object' && v !== null && typeof (v as Partial<PostLoadGc>).hotpathPostLoadGc === 'object';
}

/**
 * Runs one full GC on the thread `connect` reaches; `done` gets how long V8 took to answer, or
 * undefined when it failed or did not answer within `timeoutMs` (the session is dropped then).
 * Calls `done` exactly once.
 */
export function collectGarbage(connect: () => Session, timeoutMs: number, done: (gcMs: number | undefined) => void): void {
  let over = false;
  let session: Session | undefined;
  const finish = (gcMs: number | undefined): void => {
    if (over) return;
    over = true;
    clearTimeout(timer);
    if (session !== undefined) disconnect(session);
    done(gcMs);
  };
  const timer = setTimeout(() => finish(undefined), timeoutMs);
  try {
    session = connect();
  } catch {
    return finish(undefined);
  }
  const start = epochNow();
  try {
    session.post('HeapProfiler.collectGarbage', (err) => finish(err ? undefined : Math.round((epochNow() - start) * 10) / 10));
  } catch {
    finish(undefined);
  }
}
