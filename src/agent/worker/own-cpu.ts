// The agent worker's own CPU and that of V8's profiler thread, measured from the agent worker
// (off the target's loop) and published in a SharedArrayBuffer the main thread's sampler reads
// with each sample (collectors/agent-cost.ts): the agent's threads in the cost a run states.
//   - the agent worker: process.threadCpuUsage() where node has it (23.9+), else the active
//     time of its event loop (its work is all callbacks on that loop);
//   - V8's profiler thread (`v8:ProfEvntProc`, one per isolate being profiled, the thread that
//     wakes at each sampling interval to signal the profiled thread): its on-CPU time from
//     /proc/self/task/<tid>/schedstat (Linux; absent elsewhere). A thread that ended keeps
//     its last reading. Only the main thread's agent worker reads it (it profiles the main
//     thread; a user's own `--cpu-prof` would be counted too).
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * Float64 slots of the buffer: this worker's CPU, the profiler threads' CPU and, where node does
 * not measure it, the main thread's own CPU (loop-thread-cpu.ts) (ms; -1: not measurable).
 */
export const COST_WORKER = 0;
export const COST_PROFILER = 1;
export const COST_LOOP_THREAD = 2;
export const COST_SLOTS = 3;
/**
 * How often the figures are refreshed: the sampler reads at most this stale a figure. The stall
 * watchdog's check drives the refresh (every other check): one wakeup of the agent worker fewer
 * per refresh, on the target's own core when it is pinned.
 */
export const OWN_CPU_EVERY_MS = 200;
/** Threads are listed again at most this often (the reading of known ones is every refresh). */
const RESCAN_EVERY_MS = 1000;
const PROFILER_THREAD = 'v8:ProfEvntProc';
const TASKS = '/proc/self/task';

export function newCostBuffer(): SharedArrayBuffer {
  const buf = new SharedArrayBuffer(COST_SLOTS * 8);
  new Float64Array(buf).fill(-1);
  return buf;
}

export class OwnCpu {
  private readonly slots: Float64Array;
  private readonly threadCpu = threadCpuFn();
  private lastRefresh = -Infinity;
  /** Profiler threads being read: tid -> last on-CPU ms; `ended`: the sum of those gone. */
  private readonly tids = new Map<string, number>();
  private ended = 0;
  private lastScan = -Infinity;
  /** Threads whose name was read, and how often (see scan). */
  private readonly named = new Map<string, number>();
  private readonly linux = process.platform === 'linux';

  constructor(
    buffer: SharedArrayBuffer,
    private readonly profilerThreads: boolean,
    /** The main thread's CPU so far (ms), when it is read here (loop-thread-cpu.ts). */
    private readonly loopThread?: () => number | undefined,
  ) {
    this.slots = new Float64Array(buffer);
  }

  /**
   * Refreshes the figures when the last refresh is OWN_CPU_EVERY_MS old (within half of
   * `pacedEveryMs`, the period of the caller's timer, which drives it).
   */
  refreshIfDue(pacedEveryMs: number): void {
    if (performance.now() - this.lastRefresh >= OWN_CPU_EVERY_MS - pacedEveryMs / 2) this.refresh();
  }

  refresh(): void {
    this.lastRefresh = performance.now();
    try {
      this.slots[COST_WORKER] = this.workerMs();
      if (this.profilerThreads && this.linux) this.slots[COST_PROFILER] = this.profilerMs();
      if (this.loopThread !== undefined) this.slots[COST_LOOP_THREAD] = this.loopThread() ?? -1;
    } catch {
      // Never let a reading break the agent worker.
    }
  }

  private workerMs(): number {
    if (this.threadCpu !== undefined) {
      const c = this.threadCpu();
      return (c.user + c.system) / 1000;
    }
    return performance.eventLoopUtilization().active;
  }

  private profilerMs(): number {
    const now = performance.now();
    if (now - this.lastScan >= RESCAN_EVERY_MS) {
      this.lastScan = now;
      this.scan();
    }
    let sum = this.ended;
    for (const [tid, last] of this.tids) {
      const ms = onCpuMs(tid);
      if (ms === undefined) {
        this.ended += last;
        sum += last;
        this.tids.delete(tid);
        continue;
      }
      this.tids.set(tid, ms);
      sum += ms;
    }
    return sum;
  }

  /**
   * Finds profiler threads not known yet. A thread's name is read at two scans, then no more
   * (`named`, pruned of threads gone): a target has a dozen threads and this runs every second,
   * on the target's core when it is pinned; the second read catches a thread scanned before it
   * named itself (a new thread carries its creator's name until it does). V8 starts a new
   * profiler thread for each profile.
   */
  private scan(): void {
    const alive = readdirSync(TASKS);
    if (this.named.size > 2 * alive.length) {
      const now = new Set(alive);
      for (const tid of this.named.keys()) if (!now.has(tid)) this.named.delete(tid);
    }
    for (const tid of alive) {
      if (this.tids.has(tid)) continue;
      const reads = this.named.get(tid) ?? 0;
      if (reads >= 2) continue;
      this.named.set(tid, reads + 1);
      let comm: string;
      try {
        comm = readFileSync(`${TASKS}/${tid}/comm`, 'utf8').trim();
      } catch {
        continue;
      }
      if (comm === PROFILER_THREAD) this.tids.set(tid, onCpuMs(tid) ?? 0);
    }
  }
}

/**
 * The on-CPU time so far (ms) of the thread the agent worker watches, when it can be read: on
 * Linux, for a process's main thread (its tid is the pid; a worker thread's tid is not known to
 * Node). The stall watchdog tells a blocked thread (on the CPU all along) from one the machine
 * kept off the CPU with it.
 */
export function watchedThreadCpu(threadId: number): (() => number | undefined) | undefined {
  if (process.platform !== 'linux' || threadId !== 0) return undefined;
  const tid = String(process.pid);
  if (onCpuMs(tid) === undefined) return undefined;
  return () => onCpuMs(tid);
}

/**
 * A thread's time on CPU so far, ms: schedstat's first field (ns), else stat's utime + stime
 * (clock ticks, 100 a second on Linux); undefined once the thread is gone.
 */
function onCpuMs(tid: string): number | undefined {
  try {
    const ns = Number(readFileSync(`${TASKS}/${tid}/schedstat`, 'utf8').split(' ')[0]);
    if (Number.isFinite(ns)) return ns / 1e6;
  } catch {
    // No schedstat (a kernel without it) or no thread: try stat.
  }
  try {
    const stat = readFileSync(`${TASKS}/${tid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

function threadCpuFn(): (() => NodeJS.CpuUsage) | undefined {
  const fn = (process as unknown as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
  return typeof fn === 'function' ? () => fn.call(process) : undefined;
}
