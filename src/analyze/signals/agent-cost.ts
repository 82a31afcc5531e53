// What the in-process agent cost the target over the load window, from the agent's own readings
// (SampleMessage.agent): its callbacks on the target threads, its agent workers and V8's
// profiler threads, as a share of the target processes' CPU; and its callbacks' share of the
// target threads' wall time, the part of the loop's utilization that was the agent's, which the
// capacity a healthy run reports leaves out. Not counted (docs/agent.md, Cost): V8's stack
// walks on the profiled thread and its profiling mode, and what node does for the agent's
// subscribers and wrappers outside their functions: the figure is a lower bound.

import type { RunData } from '../../run-dir/run-data.js';
import { loadWindow, targetThreads, windowSamples } from './load-window.js';
import { onePerProcess, processCpuOf } from './process-cpu.js';
import { sum } from './stats.js';

export interface AgentCost {
  /** The agent's CPU over the target processes' CPU in the window, 0..1. */
  shareOfCpu: number;
  agentCpuMs: number;
  /** Its callbacks on the target threads (per-request paths estimated from one call in 64). */
  mainThreadMs: number;
  /** Its agent worker threads. */
  workerMs: number;
  /** V8's profiler threads (Linux only; 0 without a CPU profile). */
  profilerThreadMs: number;
  targetCpuMs: number;
  /** The callbacks' time over the target threads' time in the window: their part of the loop's utilization, 0..1. */
  loopShare: number;
}

/** undefined when no target sample in the window carries the agent's readings (an older agent). */
export function agentCost(run: RunData): AgentCost | undefined {
  const w = loadWindow(run);
  const perThread = targetThreads(run).map((t) => ({ t, samples: windowSamples(t, w) }));
  const samples = perThread.flatMap((x) => x.samples);
  const measured = samples.filter((s) => s.agent !== undefined);
  if (measured.length === 0) return undefined;
  const mainThreadMs = sum(measured.map((s) => s.agent?.mainUs ?? 0)) / 1000;
  const workerMs = sum(measured.map((s) => s.agent?.workerUs ?? 0)) / 1000;
  const profilerThreadMs = sum(measured.map((s) => s.agent?.profilerUs ?? 0)) / 1000;
  const durationMs = w?.durationMs ?? sum((perThread[0]?.samples ?? []).map((s) => s.intervalMs));
  const cpu = processCpuOf(onePerProcess(perThread), durationMs);
  const targetCpuMs = cpu.userMs + cpu.systemMs;
  const agentCpuMs = mainThreadMs + workerMs + profilerThreadMs;
  const threadMs = sum(measured.map((s) => s.intervalMs));
  return {
    shareOfCpu: targetCpuMs > 0 ? Math.min(1, agentCpuMs / targetCpuMs) : 0,
    agentCpuMs,
    mainThreadMs,
    workerMs,
    profilerThreadMs,
    targetCpuMs,
    loopShare: threadMs > 0 ? Math.min(1, mainThreadMs / threadMs) : 0,
  };
}
