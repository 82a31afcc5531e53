// A loop delay the machine caused, told sample by sample: the stall watchdog judges the thread's
// CPU over stalls of 250 ms or more (preempted-stall.ts), but a shorter delay decides the delay
// p99 of a short run alone (the p99 of 20-50 samples is their maximum). Each sample carries its
// thread's CPU (node's thread CPU, else the on-CPU time the agent worker read from /proc): over
// the samples a delay built up in, a thread held by its own work ran all along; a thread other
// processes kept off the cores ran next to nothing.

import type { SampleMessage } from '../../agent/protocol.js';
import { threadCpuUs } from './thread-cpu.js';
import { STALL_PREEMPTED_MAX_CPU_MS, STALL_PREEMPTED_MAX_CPU_SHARE } from './preempted-stall.js';

/** Loop delays from this long (ms) are judged: below it, no rule reads the delay. */
export const DELAY_JUDGED_MIN_MS = 50;

/**
 * Whether sample `i`'s loop delay was the machine's: over the samples it built up in (its own and
 * those before it, back to the delay's start, at least two since the /proc reading comes every
 * other sample), the thread ran less than STALL_PREEMPTED_MAX_CPU_SHARE of the loop's active
 * time, and less than STALL_PREEMPTED_MAX_CPU_MS in all (a block stretched by a starved machine
 * still runs its work). Not judged without the thread's CPU on every one of those samples.
 * `samples`: one thread's, in time order.
 */
export function isPreemptedDelay(samples: readonly SampleMessage[], i: number): boolean {
  const s = samples[i];
  const delayMs = s.eld.max;
  if (delayMs < DELAY_JUDGED_MIN_MS) return false;
  const from = s.t - s.intervalMs - delayMs;
  let cpuUs = 0;
  let activeUs = 0;
  for (let j = i; j >= 0; j--) {
    const x = samples[j];
    if (j < i - 1 && x.t <= from) break;
    const cpu = threadCpuUs(x.cpu);
    if (cpu === undefined) return false;
    cpuUs += cpu;
    activeUs += x.elu * x.intervalMs * 1000;
  }
  if (activeUs <= 0) return false;
  return cpuUs / activeUs < STALL_PREEMPTED_MAX_CPU_SHARE && cpuUs / 1000 < STALL_PREEMPTED_MAX_CPU_MS;
}
