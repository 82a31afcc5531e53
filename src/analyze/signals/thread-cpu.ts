// A sample's CPU of its own thread, read one way everywhere (loop-stats, compare's loop share):
// node's thread CPU (process.threadCpuUsage, Node 23.9+ and later 22s) where the agent had it,
// else the on-CPU time its worker read from /proc (Linux; the first reading is a baseline).
import type { SampleMessage } from '../../agent/protocol.js';

/** node's thread CPU of the sample (user + system, µs); undefined where node did not measure it. */
export function nodeThreadCpuUs(cpu: SampleMessage['cpu']): number | undefined {
  return cpu.threadUser !== undefined ? cpu.threadUser + (cpu.threadSystem ?? 0) : undefined;
}

/** The thread's own CPU in the sample (µs): node's figure, else /proc's; undefined when neither was read. */
export function threadCpuUs(cpu: SampleMessage['cpu']): number | undefined {
  return nodeThreadCpuUs(cpu) ?? cpu.threadOnCpu;
}
