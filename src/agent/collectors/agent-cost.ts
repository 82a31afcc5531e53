// The agent's own CPU over each sample's interval, for the cost a run states (docs/agent.md,
// Cost): its callbacks on this thread (own-time.ts) and, once the agent worker runs, the
// worker's CPU and V8's profiler threads' (published by worker/own-cpu.ts in a shared buffer).
import type { SampleMessage } from '../protocol.js';
import { ownTime } from '../own-time.js';
import { COST_LOOP_THREAD, COST_PROFILER, COST_WORKER } from '../worker/own-cpu.js';

type AgentCpu = NonNullable<SampleMessage['agent']>;

export class AgentCost {
  private slots: Float64Array | undefined;
  private lastMain = ownTime.ms;
  private lastWorker = -1;
  private lastProfiler = -1;
  private lastLoopThread = -1;

  /** The agent worker's shared figures (worker/own-cpu.ts). */
  attach(buffer: SharedArrayBuffer): void {
    this.slots = new Float64Array(buffer);
  }

  /** µs since the last call. */
  take(): AgentCpu {
    const main = ownTime.ms;
    const out: AgentCpu = { mainUs: us(main - this.lastMain) };
    this.lastMain = main;
    const slots = this.slots;
    if (slots === undefined) return out;
    const worker = slots[COST_WORKER];
    if (worker >= 0) {
      out.workerUs = this.lastWorker >= 0 ? us(worker - this.lastWorker) : 0;
      this.lastWorker = worker;
    }
    const profiler = slots[COST_PROFILER];
    if (profiler >= 0) {
      out.profilerUs = this.lastProfiler >= 0 ? us(profiler - this.lastProfiler) : 0;
      this.lastProfiler = profiler;
    }
    return out;
  }

  /**
   * The main thread's own CPU since the last call (µs), where the agent worker reads it
   * (worker/loop-thread-cpu.ts: Linux, a node without process.threadCpuUsage); else undefined.
   * The worker refreshes it every OWN_CPU_EVERY_MS, so one interval may carry the next's.
   */
  loopThreadUs(): number | undefined {
    const ms = this.slots?.[COST_LOOP_THREAD] ?? -1;
    if (ms < 0) return undefined;
    const out = this.lastLoopThread >= 0 ? us(ms - this.lastLoopThread) : 0;
    this.lastLoopThread = ms;
    return out;
  }
}

function us(ms: number): number {
  return ms > 0 ? Math.round(ms * 1000) : 0;
}
