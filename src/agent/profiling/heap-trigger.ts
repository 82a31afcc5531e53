// When a default run (no --heap) starts sampling the heap: only once the target shows something
// the heap profile would explain, because a running sampler costs every allocation-heavy target
// a fixed share of its CPU whatever its interval (probe, CPU per iteration of a loop building
// 10,000 objects: +6.5 % at one sample per 2 MiB, +9 % per 512 KiB, +21 % per 64 KiB): a server
// that allocates little never pays it. Judged on the main thread, from what the agent reads
// anyway, at most once per TRIGGER_EVERY_MS while a profile runs:
// - GC pressure: the GCs observed took ≥ TRIGGER_GC_SHARE of the time they were observed (the
//   gc-pressure finding's info level), over at least a second, counting only kinds of GC seen at
//   least TRIGGER_GC_MIN_KIND_COUNT times (a rate, not a pause: an idle heap's memory reducer runs
//   a major GC or two), and on a target starved of CPU (its loop thread got less CPU than the loop
//   was active) scaled as gc-pressure scales it (wall × c / (1 − ELU + ELU × c)): a GC's duration
//   is wall time, and a process descheduled inside one reads it long (a quiet server on a busy
//   machine started the sampler on a few scavenges);
// - heap growth: the heap outside the young generation rose ≥ TRIGGER_GROWTH_BYTES above its
//   lowest reading since the profile started (a leak, or garbage promoted by a busy server,
//   which the GC share then usually shows too).
// - live growth: after a full GC (the one forced in the middle of the load, mid-load-gc.ts, or one
//   of V8's own), the heap it left and the external memory (Buffers' bytes) are together ≥
//   TRIGGER_LIVE_GROWTH_SHARE above their lowest readings since the profile started, and
//   TRIGGER_LIVE_BYTES_PER_REQUEST per request: a small leak that stays under TRIGGER_GROWTH_BYTES
//   in a short run gets its retained view too (densely after the forced GC: a few MB; sparsely
//   after one of V8's, which can come early in the load), and so do Buffers kept per
//   request, whose bytes are off the heap (the webhook-buffer-archive scenario: 4 KB of external
//   memory per request and a few dozen bytes of heap; its V8 ran full GCs of its own, so none was
//   forced, and the view was missing in 2 of 13 runs: no culprit, no holder).
// The worker then starts the sparse sampler (inspector-profiler.ts startHeap): an allocation view
// until the middle of the load, what stays alive after it; past the middle, the view the reason
// asks for (GC pressure: who allocates; growth: what stays alive).
import type { GcEvent, SampleMessage } from '../protocol.js';
import * as v8 from 'node:v8';
import { oldGenerationUsed } from '../collectors/full-gc-canary.js';

/** The bytes of Buffers and ArrayBuffers, off the heap (~1 µs: no /proc read as process.memoryUsage() does). */
function externalUsed(): number {
  return v8.getHeapStatistics().external_memory;
}

/** GC share of the observed time that starts the heap sampler (gc-pressure reports from 5 %). */
export const TRIGGER_GC_SHARE = 0.05;
/** A kind of GC seen fewer times than this since the profile started is a pause, not pressure (gc-pressure's GC_MIN_PRESSURE_COUNT). */
export const TRIGGER_GC_MIN_KIND_COUNT = 3;
/** Growth of the heap outside the young generation that starts it (half the leak finding's 8 MiB floor for a run without requests). */
export const TRIGGER_GROWTH_BYTES = 4 * 1024 * 1024;
/** Growth of the heap a full GC left over the lowest reading since the start that starts it (see liveAfterFullGc). */
export const TRIGGER_LIVE_GROWTH_SHARE = 0.05;
/**
 * And per request finished since the start, bytes (the memory-leak finding's 512 B per request):
 * a warm-up's JIT code and caches spread over thousands of requests stay below it.
 */
export const TRIGGER_LIVE_BYTES_PER_REQUEST = 512;
/** Requests finished since the start for that rate to be judged (a server's first ones warm it up). */
export const TRIGGER_LIVE_MIN_REQUESTS = 500;
/**
 * A rise of the old generation (garbage included) this fast per request finished since the start
 * decides at once, before any full GC's reading: more than a request's promoted garbage (the quiet
 * test server's read ≈ 3 KB a request on a loaded machine) and what a leak of a megabyte a request
 * shows in its first requests, so its allocation view starts early as before.
 */
export const TRIGGER_ROUGH_BYTES_PER_REQUEST = 64 * 1024;
/** A GC the observer timed this close (ms) to the agent's forced one is part of it (the clocks read apart). */
const AGENT_GC_SLACK_MS = 1;
/** How often the condition is judged (and the old generation read). */
export const TRIGGER_EVERY_MS = 500;
/**
 * The GC share is judged over at least this much observed time and this many GCs (the agent
 * observes GCs for a slice of each second, about 10 GCs' worth: docs/agent.md).
 */
const MIN_OBSERVED_MS = 300;
const MIN_OBSERVED_GCS = 3;

/**
 * Why the heap should be sampled: GC pressure (who allocates), growth (what stays alive), or both
 * at once ('growth-gc': a short load's warm-up promotes 4 MiB as its GC share passes 5 %, and
 * only one of the two views would leave the other finding without its data).
 */
export type HeapWanted = 'gc' | 'growth' | 'live-growth' | 'growth-gc';

export class HeapTrigger {
  private armed = false;
  private fired = false;
  private gcs = 0;
  /** GC time and count per kind since arm(). */
  private byKind = new Map<string, { ms: number; count: number }>();
  /** The loop's active time, the loop thread's CPU over the same intervals, and their wall time (loop()). */
  private activeMs = 0;
  private threadCpuMs = 0;
  private loopMs = 0;
  private observedMs = 0;
  private lowest = Infinity;
  private lowestExternal = Infinity;
  private lastCheck = 0;
  private requests = 0;
  /** When the forced mid-load GC is due (profile-start's heapRetainedFrom), if one is. */
  private exactAt: number | undefined;
  /** A full GC's reading of the live heap was judged (liveAfterFullGc) since arm(). */
  private liveRead = false;
  /** When the agent's own full GC ran (epoch ms, from and to): its GCs are no pressure of the app's. */
  private agentGc: { from: number; to: number } | undefined;

  constructor(
    private readonly readOld: () => number = oldGenerationUsed,
    private readonly readExternal: () => number = externalUsed,
  ) {}

  /**
   * A profile starts: judge from now on (once per profile). `exactAt`: when the mid-load full GC
   * is due (mid-load-gc.ts), whose reading of the live heap judges growth exactly (see observe).
   */
  arm(now: number, exactAt?: number): void {
    this.armed = true;
    this.exactAt = exactAt !== undefined && exactAt > now ? exactAt : undefined;
    this.liveRead = false;
    this.agentGc = undefined;
    this.fired = false;
    this.observedMs = this.gcs = 0;
    this.byKind = new Map();
    this.activeMs = this.threadCpuMs = this.loopMs = 0;
    this.lowest = this.safeRead(this.readOld);
    this.lowestExternal = this.safeRead(this.readExternal);
    this.lastCheck = now;
    this.requests = 0;
  }

  /** Requests the thread finished (one sample's), counted while armed. */
  countRequests(finished: number): void {
    if (this.armed) this.requests += finished;
  }

  /**
   * One sample's loop figures: its wall time, ELU and the CPU the loop thread got in it
   * (undefined where the thread's CPU is not read: Node < 23.9 off Linux; then no scaling).
   */
  loop(intervalMs: number, elu: number, threadCpuMs: number | undefined): void {
    if (!this.armed || threadCpuMs === undefined || !(intervalMs > 0) || !(elu >= 0)) return;
    this.loopMs += intervalMs;
    this.activeMs += elu * intervalMs;
    this.threadCpuMs += threadCpuMs;
  }

  disarm(): void {
    this.armed = false;
  }

  /**
   * One telemetry interval: the GC events it delivered and how long GCs were observed in it.
   * Once, when the heap should be sampled: why (growth, GC pressure, or both: 'growth-gc').
   */
  observe(now: number, events: readonly GcEvent[], observedMs: number): HeapWanted | undefined {
    if (!this.armed || this.fired) return undefined;
    for (const e of events) {
      if (this.byAgent(e)) continue;
      const k = this.byKind.get(e.kind) ?? { ms: 0, count: 0 };
      k.ms += e.durationMs;
      k.count++;
      this.byKind.set(e.kind, k);
    }
    this.gcs += events.length;
    this.observedMs += observedMs;
    if (now - this.lastCheck < TRIGGER_EVERY_MS) return undefined;
    this.lastCheck = now;
    const old = this.safeRead(this.readOld);
    this.lowest = Math.min(this.lowest, old);
    this.lowestExternal = Math.min(this.lowestExternal, this.safeRead(this.readExternal));
    const pressure = this.pressureJudged() && this.gcs >= MIN_OBSERVED_GCS && this.gcShare() >= TRIGGER_GC_SHARE;
    const risen = Number.isFinite(this.lowest) && old - this.lowest >= TRIGGER_GROWTH_BYTES;
    // The old generation read here holds garbage: a busy server's promoted garbage rises as a
    // leak does until a full GC. It stands in for growth only where no full GC's reading of the
    // live heap judges it: not before the forced mid-load GC is due, nor once a full GC's reading
    // was judged (later ones of V8's own are judged by liveAfterFullGc), unless it rises faster per
    // request than garbage does. Beside GC pressure it still asks for both views at once ('growth-gc').
    const fast = this.requests > 0 && (old - this.lowest) / this.requests >= TRIGGER_ROUGH_BYTES_PER_REQUEST;
    const growth = risen && (pressure || fast || this.roughGrowthJudged(now));
    if (!pressure && !growth) return undefined;
    this.fired = true;
    return growth ? this.growthReason(pressure) : 'gc';
  }

  /**
   * The heap a full GC just left (the mid-load one, or one of V8's), with the external memory read
   * now: growth of what is live, free of the garbage the other readings carry. Once, when it rose
   * TRIGGER_LIVE_GROWTH_SHARE above the lowest readings since the profile started (which hold
   * garbage too, so the rise is real) and by TRIGGER_LIVE_BYTES_PER_REQUEST per request finished
   * since. 'live-growth' after the forced one: a few MB in the second half, which the retained
   * sampler samples densely. 'growth' after one of V8's (`forced` false): it can come early in
   * the load and its reading holds what was promoted since too, so the sampler runs sparsely, as
   * for the heap's growth (its cost on an allocation-heavy target is a third of the dense one's).
   */
  liveAfterFullGc(heapBytes: number, forced = true): HeapWanted | undefined {
    if (!this.armed || this.fired || !Number.isFinite(this.lowest) || this.requests < TRIGGER_LIVE_MIN_REQUESTS) return undefined;
    this.liveRead = true;
    const external = this.safeRead(this.readExternal);
    const withExternal = Number.isFinite(external) && Number.isFinite(this.lowestExternal);
    const live = heapBytes + (withExternal ? external : 0);
    const lowest = this.lowest + (withExternal ? this.lowestExternal : 0);
    if (live - lowest < Math.max(TRIGGER_LIVE_GROWTH_SHARE * lowest, TRIGGER_LIVE_BYTES_PER_REQUEST * this.requests)) return undefined;
    this.fired = true;
    return forced ? 'live-growth' : 'growth';
  }

  /**
   * The rough reading (the old generation with its garbage) judges growth alone: no full GC's
   * reading was judged yet, and the forced one is not still to come. On Node 24 a quiet test
   * server under four concurrent requests, beside two spinning processes, rose 4 MiB in about a
   * second of promoted garbage while the mid-load GC found its live heap 0.3 MB (5 %) above the
   * start over 2,000-3,000 requests: the rough reading started the heap sampler in 5 runs of 8.
   */
  private roughGrowthJudged(now: number): boolean {
    return !this.liveRead && (this.exactAt === undefined || now >= this.exactAt);
  }

  /**
   * The agent forced a full GC from `from` to `to` (the mid-load GC, epoch ms): the GCs observed in
   * it are the agent's. On Node 24 it is V8's memory-reducing sequence, several major GCs in a row
   * (36-53 ms in all on a small heap), enough to read as a recurring kind and push a quiet server's
   * GC share past TRIGGER_GC_SHARE (5.7-8.9 % in 2 runs of 3 beside two test suites).
   */
  agentFullGc(from: number, to: number): void {
    this.agentGc = { from, to };
  }

  private byAgent(e: GcEvent): boolean {
    const a = this.agentGc;
    return a !== undefined && e.start >= a.from - AGENT_GC_SLACK_MS && e.start <= a.to + AGENT_GC_SLACK_MS;
  }

  /** The GCs were observed long enough for their share to be judged (MIN_OBSERVED_MS). */
  private pressureJudged(): boolean {
    return this.observedMs >= MIN_OBSERVED_MS;
  }

  /**
   * Growth seen: the retained view alone when the GC share was judged and is low; both views
   * when GC pressure holds too, or when too little GC was observed yet to judge it (the agent
   * observes GCs in slices: a short load's first second can hold one or two GCs seen, while its
   * warm-up already promoted 4 MiB; a healthy Express 5 route then read 8-14 % of GC with no
   * allocation view to say whose garbage it was, and was warned about).
   */
  private growthReason(pressure: boolean): HeapWanted {
    return pressure || !this.pressureJudged() ? 'growth-gc' : 'growth';
  }

  /**
   * The observed GC share, recurring kinds only, as free cores would show it: GC and the loop's
   * other work shrunk to the part the thread ran (c, its CPU per active ms), the idle time kept.
   */
  private gcShare(): number {
    let ms = 0;
    for (const k of this.byKind.values()) if (k.count >= TRIGGER_GC_MIN_KIND_COUNT) ms += k.ms;
    const wall = ms / this.observedMs;
    if (this.activeMs <= 0 || this.loopMs <= 0) return wall;
    const c = Math.min(1, this.threadCpuMs / this.activeMs);
    const elu = Math.min(1, this.activeMs / this.loopMs);
    const kept = 1 - elu + elu * c;
    return kept > 0 ? (wall * c) / kept : wall;
  }

  private safeRead(read: () => number): number {
    try {
      return read();
    } catch {
      return Infinity;
    }
  }
}

/** The loop thread's CPU in a sample, ms: node's own reading (Node 23.9+), else the agent's from /proc; undefined without either. */
export function threadCpuMs(cpu: SampleMessage['cpu']): number | undefined {
  if (cpu.threadUser !== undefined) return (cpu.threadUser + (cpu.threadSystem ?? 0)) / 1000;
  return cpu.threadOnCpu !== undefined ? cpu.threadOnCpu / 1000 : undefined;
}
