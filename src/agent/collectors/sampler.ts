// The per-interval sample of one thread: event-loop delay (loop-delay.ts, reset each
// interval), ELU, CPU (process and, on Node 22+, this thread), memory (the RSS once a second),
// active resources and server-side HTTP. Taken on the loop-delay timer's tick (or an unref'd
// timer of its own); a blocked loop shows up as one long ELD sample here, and as `stall`
// messages from the agent worker while it lasts.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { SampleMessage } from '../protocol.js';
import type { HttpCollector } from './http-collector.js';
import { LoopDelay, type LoopTick, type TickBatch } from './loop-delay.js';
import { AgentCost } from './agent-cost.js';
import { reportError } from '../safe.js';

type SampleBody = Omit<SampleMessage, 'v' | 'pid' | 'threadId' | 't'>;
type ThreadCpu = () => NodeJS.CpuUsage;

/** Above this many active resources their listing is read less often (see Sampler#resources). */
export const RESOURCES_MANY = 2000;
export const RESOURCES_SLOW_EVERY = 10;
/** The RSS (a /proc read) is read about this often; the heap at every sample (MemoryReader). */
export const RSS_EVERY_MS = 1000;

export class Sampler {
  private readonly eld = new LoopDelay();
  /** The agent's own CPU, sent with each sample (agent-cost.ts). */
  readonly cost = new AgentCost();
  private elu: EventLoopUtilization = performance.eventLoopUtilization();
  private cpu: NodeJS.CpuUsage = process.cpuUsage();
  private readonly threadCpuUsage: ThreadCpu | undefined = threadCpuFn();
  private threadCpu: NodeJS.CpuUsage | undefined = this.threadCpuUsage?.();
  private last = performance.now();
  private lastResources: Record<string, number> | undefined;
  private resourceCount = 0;
  private resourcesReused = 0;
  private readonly memory: MemoryReader;

  constructor(
    private readonly http: HttpCollector,
    private readonly intervalMs: number,
  ) {
    this.memory = new MemoryReader(Math.max(1, Math.round(RSS_EVERY_MS / intervalMs)));
  }

  /** `ticks`: callbacks run on the loop-delay timer (the sample's, when the interval allows), `batch` around them (loop-delay.ts). */
  start(ticks?: readonly (LoopTick | undefined)[], batch?: TickBatch): void {
    this.eld.start(ticks, batch);
  }

  stop(): void {
    this.eld.stop();
  }

  /** `fresh`: read every memory figure now (the last samples of a run: flush, exit, after the post-load GC). */
  take(droppedMessages: number, fresh = false): SampleBody {
    const now = performance.now();
    const eluNow = performance.eventLoopUtilization();
    const cpuNow = process.cpuUsage();
    const sample: SampleBody = {
      type: 'sample',
      intervalMs: Math.round((now - this.last) * 1000) / 1000,
      eld: withOwnLateness(this.eld.take(), now - this.last - this.intervalMs),
      elu: Math.round(performance.eventLoopUtilization(eluNow, this.elu).utilization * 10000) / 10000,
      cpu: { user: cpuNow.user - this.cpu.user, system: cpuNow.system - this.cpu.system },
      mem: this.memory.read(fresh),
      resources: this.resources(),
    };
    this.addThreadCpu(sample);
    sample.agent = this.cost.take();
    const http = this.http.take();
    if (http !== undefined) sample.http = http;
    const other = this.http.takeOther();
    if (other > 0) sample.httpOther = other;
    const unanswered = this.http.unanswered.take();
    if (unanswered !== undefined) sample.unanswered = unanswered;
    if (droppedMessages > 0) sample.dropped = droppedMessages;
    this.last = now;
    this.elu = eluNow;
    this.cpu = cpuNow;
    return sample;
  }

  /**
   * Active resources by type. The listing has one entry per resource, so with very many (a timer
   * leak holds 100,000s) it costs the target on every sample: then it is read once every
   * RESOURCES_SLOW_EVERY samples and the last counts are repeated in between.
   */
  private resources(): Record<string, number> {
    if (this.lastResources !== undefined && this.resourceCount > RESOURCES_MANY && ++this.resourcesReused < RESOURCES_SLOW_EVERY)
      return this.lastResources;
    this.resourcesReused = 0;
    const info = (process as unknown as { getActiveResourcesInfo?: () => string[] }).getActiveResourcesInfo?.() ?? [];
    const out: Record<string, number> = {};
    for (const r of info) out[r] = (out[r] ?? 0) + 1;
    this.resourceCount = info.length;
    this.lastResources = out;
    return out;
  }

  private addThreadCpu(sample: SampleBody): void {
    if (this.threadCpuUsage === undefined || this.threadCpu === undefined) {
      const onCpu = this.cost.loopThreadUs();
      if (onCpu !== undefined) sample.cpu.threadOnCpu = onCpu;
      return;
    }
    const now = this.threadCpuUsage();
    sample.cpu.threadUser = now.user - this.threadCpu.user;
    sample.cpu.threadSystem = now.system - this.threadCpu.system;
    this.threadCpu = now;
  }
}

/**
 * A block that is still going on when the sample is taken has not reached the delay timer yet,
 * but the sampler's own timer is late by it: that lateness raises max (and counts as one
 * observation when the loop-delay timer saw none).
 */
function withOwnLateness(eld: SampleBody['eld'], latenessMs: number): SampleBody['eld'] {
  const late = Math.round(latenessMs * 1000) / 1000;
  if (late <= eld.max) return eld;
  if (eld.count === 0) return { count: 1, min: late, mean: late, max: late, p50: late, p90: late, p99: late };
  return { ...eld, max: late };
}

function threadCpuFn(): ThreadCpu | undefined {
  const fn = (process as unknown as { threadCpuUsage?: ThreadCpu }).threadCpuUsage;
  return typeof fn === 'function' ? () => fn.call(process) : undefined;
}

/**
 * The process's memory for one sample. `process.memoryUsage()` reads the RSS from /proc (≈ 33 µs
 * on this VM, most of a sample's cost); the heap figures come from V8's own counters (≈ 0.7 µs).
 * So the full reading is taken once every `every` samples and the heap read in between, RSS and
 * ArrayBuffers repeating the last full reading (their trends are judged over seconds).
 */
export class MemoryReader {
  private left = 0;
  private last: SampleBody['mem'] | undefined;

  constructor(private readonly every: number) {}

  read(fresh = false): SampleBody['mem'] {
    const last = this.last;
    if (last !== undefined && --this.left > 0 && !fresh) {
      const h = getHeapStatistics();
      return {
        rss: last.rss,
        heapUsed: h.used_heap_size,
        heapTotal: h.total_heap_size,
        external: h.external_memory,
        arrayBuffers: last.arrayBuffers,
      };
    }
    this.left = this.every;
    let m: NodeJS.MemoryUsage;
    try {
      m = process.memoryUsage();
    } catch (err) {
      // The RSS is read from /proc, which takes a file descriptor: an app that leaks them runs out
      // (EMFILE), and that is when the samples matter most. The heap comes from V8's counters, the
      // RSS repeats the last reading (0 before any); the failure is reported once as `rss`.
      reportError('rss', err);
      const h = getHeapStatistics();
      return {
        rss: last?.rss ?? 0,
        heapUsed: h.used_heap_size,
        heapTotal: h.total_heap_size,
        external: h.external_memory,
        arrayBuffers: last?.arrayBuffers ?? 0,
      };
    }
    this.last = { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers };
    return this.last;
  }
}
