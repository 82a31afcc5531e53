// What the main thread hands its agent worker (the worker never reads the environment:
// its own env has no HOTPATH_* variables, so a preload of the agent in it stays inert).
import type { AgentConfig } from '../protocol.js';

export interface AgentWorkerData {
  /** Marks the agent's own worker. */
  hotpathAgentWorker: true;
  socket: string;
  runDir: string;
  config: AgentConfig;
  /** The main thread the worker watches and profiles. */
  pid: number;
  threadId: number;
  /** Float64Array(1) over this buffer: the main thread's last heartbeat, epoch ms. */
  heartbeat: SharedArrayBuffer;
}

/** Main thread -> worker: the main thread sent its last sample after a flush. */
export const MAIN_FLUSHED = 'hotpath:main-flushed';

export function isAgentWorkerData(v: unknown): v is AgentWorkerData {
  return typeof v === 'object' && v !== null && (v as { hotpathAgentWorker?: unknown }).hotpathAgentWorker === true;
}
