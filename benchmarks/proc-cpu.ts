// CPU time from /proc, shared by the benchmarks: a process's user + system time (all its
// threads) and the machine's busy time. Linux only, like the benchmarks' `taskset` pinning.
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's times (USER_HZ; 100 on Linux). */
export const CLK_TCK = 100;

/** User + system clock ticks of process `pid` (all threads); 0 once it has exited. */
export function processTicks(pid: number | string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

/** User + system ms of process `pid`. */
export function processCpuMs(pid: number): number {
  return (processTicks(pid) * 1000) / CLK_TCK;
}

/** Busy clock ticks of the whole machine: user, nice, system, irq, softirq, steal. */
export function machineBusyTicks(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
}

/** On-CPU ms of a process's threads by role: its main thread, V8's profiler thread(s), all the others. */
export interface ThreadCpuMs {
  main: number;
  profiler: number;
  other: number;
}

/**
 * The on-CPU time of each thread of `pid` from /proc/<pid>/task/<tid>/schedstat (ns, finer than
 * stat's clock ticks), summed by role; threads that ended since are missing (read before and after
 * a window, their time is lost: the benchmarks' servers start none in the window).
 */
export function threadCpuMs(pid: number): ThreadCpuMs {
  const out: ThreadCpuMs = { main: 0, profiler: 0, other: 0 };
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const ms = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
      if (!Number.isFinite(ms)) continue;
      if (tid === String(pid)) out.main += ms;
      else if (readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === 'v8:ProfEvntProc') out.profiler += ms;
      else out.other += ms;
    } catch {
      // The thread ended.
    }
  }
  return out;
}
