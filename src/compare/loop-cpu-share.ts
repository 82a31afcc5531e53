// How much of its busy time each run's event loop spent on a CPU: a run's loop can be busy (not
// waiting for I/O) and still not run, because the machine gave its core to someone else (other
// processes of a shared runner, the load generator, the host's other guests). Two runs of the
// same build on a busy 2-core machine were measured 0.18 and 0.38 of their busy time on a CPU,
// and their throughput 21 and 52 req/s: a whole-run difference the per-second intervals cannot
// see and a fixed ±10% margin does not absorb. The ratio between the runs' shares is what the
// machine alone moves the load figures by; compare-load judges them at equal share. Only where the
// loop is the server's bottleneck (saturated, doing most of the process's work): when the
// server's own threads take the cores from its loop (a thread pool, workers), the difference is
// the server's doing, not the machine's, and a loop that waits on I/O does not serve in
// proportion to the time it runs.

import type { RunData } from '../run-dir/run-data.js';
import { loadWindow, targetThreads, windowSamples } from '../analyze/signals/load-window.js';
import { threadCpuUs } from '../analyze/signals/thread-cpu.js';

/** The loop is the bottleneck from this event-loop utilization over the window on. */
export const SATURATED = 0.8;

/**
 * The loop threads must have used at least this share of their processes' CPU. Otherwise the
 * server's own threads (a thread pool hashing, workers) compete with its loop for the cores: an
 * async twin of a pbkdf2Sync login read 0.10 of its busy time on a CPU, its four pool threads
 * using 0.4 cores beside the loop's 0.07. That is the server's doing, not the machine's.
 */
export const MIN_LOOP_SHARE_OF_PROCESS = 0.6;

export interface LoopCpuShare {
  /** Loop-thread CPU time over the time the loop was busy (utilization × wall), 0..1. */
  share: number;
  /** The loop's mean utilization over the window, 0..1. */
  utilization: number;
  /** The loop threads' share of their processes' CPU, 0..1. */
  ofProcess: number;
}

/**
 * The serving threads' CPU over their busy time in the load window, counted from the sample after
 * each thread's first reading of it (the agent's worker reads it from /proc on Node 20/22 only
 * once it runs, and its first reading is the baseline, 0); undefined when the loop was busy less
 * than SATURATED of the counted time, or the loop threads used less than
 * MIN_LOOP_SHARE_OF_PROCESS of their processes' CPU.
 */
export function loopCpuShare(run: RunData): LoopCpuShare | undefined {
  const w = loadWindow(run);
  let loopUs = 0;
  let processUs = 0;
  let busyMs = 0;
  let wallMs = 0;
  const pids = new Set<number>();
  for (const t of targetThreads(run)) {
    // Every thread's samples repeat its process's CPU: counted from one thread per process.
    const countProcess = !pids.has(t.pid);
    pids.add(t.pid);
    let baseline = false;
    for (const s of windowSamples(t, w)) {
      const us = threadCpuUs(s.cpu);
      if (!baseline) {
        baseline = us !== undefined;
        continue;
      }
      if (us === undefined) return undefined;
      loopUs += us;
      if (countProcess) processUs += s.cpu.user + s.cpu.system;
      busyMs += s.elu * s.intervalMs;
      wallMs += s.intervalMs;
    }
  }
  if (wallMs === 0 || busyMs < SATURATED * wallMs || !(processUs > 0)) return undefined;
  const ofProcess = Math.min(1, loopUs / processUs);
  if (ofProcess < MIN_LOOP_SHARE_OF_PROCESS) return undefined;
  return { share: Math.min(1, loopUs / 1000 / busyMs), utilization: busyMs / wallMs, ofProcess };
}

export interface MachineShare {
  before: number;
  after: number;
  /** after / before: what the machine alone multiplied the after run's throughput by. */
  ratio: number;
}

export function machineShare(before: RunData, after: RunData): MachineShare | undefined {
  const b = loopCpuShare(before);
  const a = loopCpuShare(after);
  if (!b || !a || !(b.share > 0) || !(a.share > 0)) return undefined;
  return { before: b.share, after: a.share, ratio: a.share / b.share };
}
