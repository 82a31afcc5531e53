// A stall the machine caused: the watched thread missed its heartbeats because other processes
// kept it off the cores (preempted), not because its own work held it. The agent reads the
// thread's on-CPU time over the stall (StallMessage.threadCpuMs over threadCpuOverMs, Linux,
// a process's main thread): a thread blocked by its own loop runs all along (CPU ≈ wall), a
// preempted one gets a small share. Stalls without the figures (another platform, a worker
// thread, an older agent) are taken as blocks, as before.

import type { StallMessage } from '../../agent/protocol.js';

/** Below this share of the measured stretch on the CPU, the stalled thread was kept off the cores... */
export const STALL_PREEMPTED_MAX_CPU_SHARE = 0.5;
/**
 * ...unless what it did run over the stall (the share times the stall's length) is at least this
 * much CPU (ms, the heartbeat's period): code that held the loop that long without a turn is a
 * block, stretched by a starved machine (a backtracking regex ran 420 ms of CPU in a 1.6 s stall at
 * load 30, 26 % of the time on a core). A preempted loop turns, and beats, as soon as it runs.
 */
export const STALL_PREEMPTED_MAX_CPU_MS = 100;
/** The measured stretch must be at least this long (ms) to judge: two readings 10 ms apart say nothing. */
export const STALL_CPU_MIN_MEASURED_MS = 100;

/** The share of the stall's measured stretch the thread spent on the CPU, when measured long enough. */
export function stallCpuShare(stall: Pick<StallMessage, 'threadCpuMs' | 'threadCpuOverMs'>): number | undefined {
  const { threadCpuMs: cpu, threadCpuOverMs: over } = stall;
  if (cpu === undefined || over === undefined || over < STALL_CPU_MIN_MEASURED_MS) return undefined;
  return Math.min(1, cpu / over);
}

/** Whether the thread was kept off the cores during the stall and ran next to nothing: starvation, not a block. */
export function isPreemptedStall(stall: Pick<StallMessage, 'threadCpuMs' | 'threadCpuOverMs' | 'durationMs'>): boolean {
  const share = stallCpuShare(stall);
  return share !== undefined && share < STALL_PREEMPTED_MAX_CPU_SHARE && share * stall.durationMs < STALL_PREEMPTED_MAX_CPU_MS;
}

/**
 * The sentence a finding adds when a stall of at least `minMs` was the machine's: the loop missed
 * its heartbeats while the process waited for a core, which is starvation, not a block.
 */
export function describePreemptedStall(s: { preemptedStallMaxMs: number; preemptedStalls: number }, minMs: number): string {
  if (s.preemptedStalls === 0 || s.preemptedStallMaxMs < minMs) return '';
  return (
    ` The loop missed its heartbeat for up to ${Math.round(s.preemptedStallMaxMs)} ms while the process was kept off the CPU ` +
    `(${s.preemptedStalls === 1 ? 'one stall' : `${s.preemptedStalls} stalls`} in which the main thread ran less than ${Math.round(STALL_PREEMPTED_MAX_CPU_SHARE * 100)} % of the time, under ${STALL_PREEMPTED_MAX_CPU_MS} ms of CPU): ` +
    'other processes starved it; that is not a block, and it is not counted as one.'
  );
}
