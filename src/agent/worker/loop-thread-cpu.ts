// The main thread's own CPU where node does not measure it (process.threadCpuUsage, 23.9+, is
// missing on Node 20 and early 22s), read by the agent worker off the target's loop: on Linux
// the main thread's tid is the pid, so its line in /proc/self/task/<pid>/schedstat (on-CPU ns;
// else stat's utime + stime) is readable from any thread. The worker publishes it with the other
// figures it refreshes (own-cpu.ts, every OWN_CPU_EVERY_MS) and the sampler sends the increase as
// `cpu.threadOnCpu` (collectors/agent-cost.ts): the loop thread's CPU, against which off-loop-cpu
// measures the CPU that ran elsewhere (analyze/off-loop-cpu.ts).
import { watchedThreadCpu } from './own-cpu.js';

/**
 * A reader of the main thread's CPU so far (ms) for the agent worker of `threadId`, or undefined
 * when it is not wanted (node measures the thread itself) or not readable (not Linux, a worker
 * thread: its tid is not known to node).
 */
export function loopThreadCpu(threadId: number, nodeMeasures = hasThreadCpuUsage()): (() => number | undefined) | undefined {
  if (nodeMeasures) return undefined;
  return watchedThreadCpu(threadId);
}

function hasThreadCpuUsage(): boolean {
  return typeof (process as unknown as { threadCpuUsage?: unknown }).threadCpuUsage === 'function';
}
