// Sees every full GC of this isolate without a GC callback. An unreachable object registered
// with a FinalizationRegistry is collected, and its cleanup runs as a task soon after, at the
// next full (mark-compact) GC: V8's scavenger keeps the targets of weak cells alive, so
// scavenges never collect it. One small JS call per full GC, while the `gc` PerformanceObserver
// costs the server at every GC (docs/agent.md, Cost). The cleanup reads the heap used outside
// the young generation: what the full GC left, plus what was promoted since. The task runs on
// the loop after the I/O callbacks then ready, so on a busy server several requests and
// scavenges may come first: on a big-JSON server the old large-object space read 0.3 to 18 MB
// from one full GC to the next (the responses in flight) while the old space held 5.8 MB.
// It re-arms a new canary.
//
// Full GCs that follow each other before the cleanup task runs count once.
import * as v8 from 'node:v8';
import { epochNow } from '../clock.js';

/** Full GCs whose heap is kept per interval (bounded memory; more are counted, not listed). */
export const MAX_FULL_GCS_PER_INTERVAL = 100;

export interface FullGcs {
  count: number;
  /** The heap used right after each full GC, bytes, with its epoch ms. */
  heapAfter: { t: number; bytes: number }[];
}

export class FullGcCanary {
  private count = 0;
  private heapAfter: { t: number; bytes: number }[] = [];
  private registry: FinalizationRegistry<0> | undefined;
  private readonly token = {};

  start(): void {
    if (this.registry !== undefined || typeof FinalizationRegistry !== 'function') return;
    this.registry = new FinalizationRegistry<0>(() => {
      try {
        this.collected();
      } catch {
        // A cleanup callback that throws would reach the target as an uncaught exception.
      }
    });
    this.arm();
  }

  stop(): void {
    this.registry?.unregister(this.token);
    this.registry = undefined;
  }

  /** The full GCs since the last call, then reset. */
  take(): FullGcs {
    const out: FullGcs = { count: this.count, heapAfter: this.heapAfter };
    this.count = 0;
    this.heapAfter = [];
    return out;
  }

  private arm(): void {
    this.registry?.register({}, 0, this.token);
  }

  private collected(): void {
    if (this.registry === undefined) return;
    this.count++;
    if (this.heapAfter.length < MAX_FULL_GCS_PER_INTERVAL) this.heapAfter.push({ t: epochNow(), bytes: oldGenerationUsed() });
    this.arm();
  }
}

/**
 * Spaces left out of the reading: the young generation (what it holds was allocated since the last
 * GC), V8's compiled code (`code_space`, `code_large_object_space`) and, from V8 12 (Node 22), the
 * trusted spaces that hold bytecode and its metadata. Code and bytecode are V8's own, compiled,
 * flushed and recompiled at its pace: on Node 24 they swung by 1.1 MB from one full GC to the
 * next on an idle hapi server (the memory-reducing post-load GC flushes bytecode), as much as a
 * small leak keeps in a short run. The read-only space never changes.
 */
const NOT_APP_DATA = /^(new_|code_|read_only_)|trusted/;

/**
 * The heap used by the app's objects outside the young generation. Read by the cleanup task
 * after a full GC, it is what the GC left plus what was promoted since; the whole heap would also
 * count what the app allocated since, which under a server's load is tens of MB (big strings land
 * in the young large-object space) and made heap-after readings swing by that much.
 */
export function oldGenerationUsed(): number {
  let bytes = 0;
  for (const s of v8.getHeapSpaceStatistics()) if (!NOT_APP_DATA.test(s.space_name)) bytes += s.space_used_size;
  return bytes;
}
