// One full GC of the thread in the middle of the load (HEAP_RETAINED_FROM of the window,
// profile-start's heapRetainedFrom) when V8 ran none of its own since 30 % of it. A short
// run at a modest rate often has no full GC between the start of the load and its end, and then
// the heap left after GCs has two readings: before the load and after it (post-load-gc.ts). A
// leak and a server that warmed up (JIT code, lazily-filled caches, a pool that grew) both rise
// between them; a reading in the middle tells them apart: a leak keeps rising in the second half,
// a warm-up has flattened. The full GC canary (collectors/full-gc-canary.ts) reads the heap after
// it like after any full GC; a run with full GCs of its own from 30 % of the load on pays nothing.
//
// One full GC, synchronous, from the agent's sample tick: V8's `gc()` taken from a new context with
// --expose-gc set just for that and unset at once (as jest's leak detector does). It must leave
// the heap as the post-load GC does (the inspector's HeapProfiler.collectGarbage, V8's
// CollectAllAvailableGarbage: memory-reducing GCs in a row), since the analysis takes the
// difference of the two: from V8 12 (Node 22) a plain mark-compact leaves what the memory-reducing
// one frees (compilation caches and the like: 0.25 MB more on an idle hapi server on Node 24,
// a quarter of a small leak's growth in a short run), so there it is asked for with the same
// flavor (`gc({ flavor: 'last-resort' })`: 36 ms instead of 18-22 on a 9 MB heap). V8 11 (Node 20)
// takes no such option and a plain one reads within 30 KB of the post-load GC there. The pause is
// reported as the agent's (a stall `byAgent: 'mid-load-gc'`) so the loop-delay figures leave it
// out. Above MID_LOAD_GC_MAX_HEAP_BYTES a full GC would hold the loop for tens of ms (the stall
// watchdog reports from 250): none is forced.
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { epochNow } from '../clock.js';

/**
 * V8's own full GCs count from this share of the load window on (the middle is at 0.5): the
 * analysis takes its middle reading from 30 % to 70 % of the window (signals/growth-per-request.ts),
 * so one of V8's before 30 % is no middle reading and the agent still forces one.
 */
export const MID_LOAD_OWN_GC_FROM = 0.3;

/** Old generation above which no full GC is forced (its pause grows with the live heap). */
export const MID_LOAD_GC_MAX_HEAP_BYTES = 64 * 1024 * 1024;

type Gc = () => void;
type GcWith = (options: typeof LAST_RESORT) => void;
/** What HeapProfiler.collectGarbage runs: V8's CollectAllAvailableGarbage. */
const LAST_RESORT = { type: 'major', execution: 'sync', flavor: 'last-resort' } as const;

/** Whether V8's gc() takes a flavor (V8 12 on: Node 22); V8 11 ignores options it does not know. */
function takesFlavor(): boolean {
  return Number(process.versions.v8.split('.')[0]) >= 12;
}
let gcFunction: Gc | null | undefined;

/** V8's gc(), or null when it cannot be had (the flag refused). */
function fullGc(): Gc | null {
  if (gcFunction !== undefined) return gcFunction;
  gcFunction = null;
  const exposed = typeof (globalThis as { gc?: unknown }).gc === 'function';
  try {
    if (!exposed) v8.setFlagsFromString('--expose-gc');
    const gc: unknown = vm.runInNewContext('gc');
    if (typeof gc === 'function') gcFunction = takesFlavor() ? () => (gc as GcWith)(LAST_RESORT) : (gc as Gc);
  } finally {
    if (!exposed) v8.setFlagsFromString('--no-expose-gc');
  }
  return gcFunction;
}

export class MidLoadGc {
  private window: { from: number; at: number } | undefined;
  private ownFullGcs = 0;

  /** A profile starts now with a known middle (`heapRetainedFrom`): judged from then, once. */
  arm(now: number, at: number | undefined): void {
    this.window = at !== undefined && at > now ? { from: now + ((at - now) * MID_LOAD_OWN_GC_FROM) / 0.5, at } : undefined;
    this.ownFullGcs = 0;
  }

  disarm(): void {
    this.window = undefined;
  }

  /**
   * One sample interval's full GCs. At the middle, when none ran since MID_LOAD_OWN_GC_FROM and the
   * heap is small enough, forces one; returns its pause (start, ms) and the heap it left, else undefined.
   */
  observe(
    now: number,
    fullGcs: number,
    oldGenerationBytes: () => number,
  ): { start: number; durationMs: number; heapAfter: number } | undefined {
    const w = this.window;
    if (w === undefined) return undefined;
    if (now >= w.from) this.ownFullGcs += fullGcs;
    if (now < w.at) return undefined;
    this.window = undefined;
    if (this.ownFullGcs > 0 || oldGenerationBytes() > MID_LOAD_GC_MAX_HEAP_BYTES) return undefined;
    const gc = fullGc();
    if (gc === null) return undefined;
    const start = epochNow();
    gc();
    const durationMs = Math.round((epochNow() - start) * 10) / 10;
    return { start, durationMs, heapAfter: oldGenerationBytes() };
  }
}
