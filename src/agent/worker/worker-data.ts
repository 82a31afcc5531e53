// What the main thread hands its agent worker (the worker never reads the environment:
// its own env has no HOTPATH_* variables, so a preload of the agent in it stays inert).
import type { AgentConfig, ControlMessage } from '../protocol.js';

export interface AgentWorkerData {
  /** Marks the agent's own worker. */
  hotpathAgentWorker: true;
  socket: string;
  runDir: string;
  config: AgentConfig;
  /** The main thread the worker watches and profiles. */
  pid: number;
  threadId: number;
  /** Float64Array(1) over this buffer: the watched thread's last heartbeat, epoch ms. */
  heartbeat: SharedArrayBuffer;
  /** ProfileRescueFlag's cells: a profile is pending; the worker rescued it at exit. */
  profileRescue: SharedArrayBuffer;
  /**
   * Watching a worker-thread target: stalls only. connectToMainThread() would reach the
   * process's main thread, not the watched one, so profiles and control stay in that thread.
   */
  watchdogOnly?: boolean;
  /** The worker's own CPU and V8's profiler threads', for the run's cost (own-cpu.ts). */
  cost?: SharedArrayBuffer;
}

/** Main thread -> worker: the target shows GC pressure or heap growth: start sampling the heap (profiling/heap-trigger.ts). */
export interface HeapWantedMessage {
  hotpathHeapWanted: 'gc' | 'growth' | 'live-growth' | 'growth-gc';
}

export function isHeapWanted(v: unknown): v is HeapWantedMessage {
  const w = (v as { hotpathHeapWanted?: unknown } | null)?.hotpathHeapWanted;
  return w === 'gc' || w === 'growth' || w === 'live-growth' || w === 'growth-gc';
}
/** Main thread -> worker: the main thread sent its last sample after a flush. */
export const MAIN_FLUSHED = 'hotpath:main-flushed';
/**
 * Main thread -> worker: every control message but phases. The worker's own connection may
 * open after the CLI sent one (or be accepted later than the CLI broadcast it); the worker
 * acts once per `seq`, whichever copy comes first.
 */
export interface ForwardedControl {
  hotpathForward: ControlMessage;
}

export function isForwardedControl(v: unknown): v is ForwardedControl {
  return typeof v === 'object' && v !== null && typeof (v as { hotpathForward?: unknown }).hotpathForward === 'object';
}

/** Wraps a control handler so each `seq` is acted on once; copies and stale commands are dropped. */
export function oncePerSeq(handle: (msg: ControlMessage) => void): (msg: ControlMessage) => void {
  let lastSeq = 0;
  return (msg) => {
    if (msg.seq !== undefined) {
      if (msg.seq <= lastSeq) return;
      lastSeq = msg.seq;
    }
    handle(msg);
  };
}

export function isAgentWorkerData(v: unknown): v is AgentWorkerData {
  return typeof v === 'object' && v !== null && (v as { hotpathAgentWorker?: unknown }).hotpathAgentWorker === true;
}

/**
 * Main thread -> worker: scripts (V8 script ids) that hold the functions requests left
 * unanswered went through last (collectors/unanswered-routes.ts): the function ranges written at
 * the flush cover them too, so the CLI finds their URLs although the CPU profile may never have
 * sampled them.
 */
export interface ScriptsWantedMessage {
  hotpathScriptsWanted: string[];
}

export function isScriptsWanted(v: unknown): v is ScriptsWantedMessage {
  const w = (v as { hotpathScriptsWanted?: unknown } | null)?.hotpathScriptsWanted;
  return Array.isArray(w) && w.every((x) => typeof x === 'string');
}
