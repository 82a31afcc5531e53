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
  /**
   * Watching a worker-thread target: stalls only. connectToMainThread() would reach the
   * process's main thread, not the watched one, so profiles and control stay in that thread.
   */
  watchdogOnly?: boolean;
}

/** Main thread -> worker: the main thread sent its last sample after a flush. */
export const MAIN_FLUSHED = 'hotpath:main-flushed';
/** Worker -> main thread: the worker's own connection is open; until then main forwards control. */
export const WORKER_CONNECTED = 'hotpath:worker-connected';

/** Main thread -> worker: a control message the worker's connection opened too late to see. */
export interface ForwardedControl {
  hotpathForward: ControlMessage;
}

export function isForwardedControl(v: unknown): v is ForwardedControl {
  return typeof v === 'object' && v !== null && typeof (v as { hotpathForward?: unknown }).hotpathForward === 'object';
}

export function isAgentWorkerData(v: unknown): v is AgentWorkerData {
  return typeof v === 'object' && v !== null && (v as { hotpathAgentWorker?: unknown }).hotpathAgentWorker === true;
}
