// Process CPU over the load window, counted once per process: every thread's samples repeat
// its process's figures, so one thread per process (the main one when it reports) is read.
// Shared by the report's telemetry summary and the off-loop CPU analyzer.

import type { SampleMessage } from '../../agent/protocol.js';
import type { RunData } from '../../run-dir/run-data.js';
import { loadWindow, targetThreads, windowSamples } from './load-window.js';
import { sum } from './stats.js';

/** The main thread's samples of each process (or its first reporting thread). */
export function onePerProcess(perThread: { t: { pid: number; threadId: number }; samples: SampleMessage[] }[]): SampleMessage[][] {
  const byPid = new Map<number, { t: { threadId: number }; samples: SampleMessage[] }>();
  for (const x of perThread) {
    const prev = byPid.get(x.t.pid);
    if (!prev || (x.t.threadId === 0 && prev.t.threadId !== 0)) byPid.set(x.t.pid, x);
  }
  return [...byPid.values()].map((x) => x.samples);
}

export interface ProcessCpu {
  userMs: number;
  systemMs: number;
  /** Cores used on average over the window, all target processes together. */
  cores: number;
}

/** Process CPU of sample groups (one per process) over `durationMs`. */
export function processCpuOf(groups: SampleMessage[][], durationMs: number): ProcessCpu {
  const userMs = sum(groups.map((g) => sum(g.map((s) => s.cpu.user)))) / 1000;
  const systemMs = sum(groups.map((g) => sum(g.map((s) => s.cpu.system)))) / 1000;
  return { userMs, systemMs, cores: durationMs > 0 ? (userMs + systemMs) / durationMs : 0 };
}

/** The target processes' CPU over the load window (the first thread's samples' span without one). */
export function processCpu(run: RunData): ProcessCpu {
  const w = loadWindow(run);
  const perThread = targetThreads(run).map((t) => ({ t, samples: windowSamples(t, w) }));
  const durationMs = w?.durationMs ?? sum((perThread[0]?.samples ?? []).map((s) => s.intervalMs));
  return processCpuOf(onePerProcess(perThread), durationMs);
}

/**
 * The serving threads' own CPU over the load window (ms, all target threads together), when
 * every one of their samples in it measures it: node's thread CPU (`threadUser`/`threadSystem`,
 * Node 23.9+), else the main thread's on-CPU time its agent worker read from /proc (`threadOnCpu`,
 * Linux; refreshed every 200 ms, so only the sum over the window is exact). Undefined otherwise.
 */
export function loopThreadsCpuMs(run: RunData): number | undefined {
  const w = loadWindow(run);
  const samples = targetThreads(run).flatMap((t) => windowSamples(t, w));
  let us = 0;
  for (const s of samples) {
    const c = s.cpu;
    if (c.threadUser !== undefined) us += c.threadUser + (c.threadSystem ?? 0);
    else if (c.threadOnCpu !== undefined) us += c.threadOnCpu;
    else return undefined;
  }
  return samples.length > 0 ? us / 1000 : undefined;
}
