// The run directory: the contract between collecting (src/run) and analyzing (src/analyze,
// src/report). Versioned; documented in docs/run-directory.md.
//
//   .hotpath/<timestamp>-<name>/
//     meta.json                     RunMeta
//     telemetry.ndjson              one AgentMessage per line, streamed as received
//     load.json                     LoadResult
//     cpu-<pid>-<tid>.cpuprofile    V8 CPU profile of the load window, per thread that served
//     heap-<pid>-<tid>.heapprofile  sampling heap profile (with --heap)
//     target.log                    the target's stdout and stderr
//     report.json, report.html, report.md   written by src/report

import type { RunPhase } from '../agent/protocol.js';

export const RUN_DIR_VERSION = 1;

/** Fixed file names inside a run directory. */
export const RUN_FILES = {
  meta: 'meta.json',
  telemetry: 'telemetry.ndjson',
  load: 'load.json',
  log: 'target.log',
} as const;

/** Name of a profile file, as the agent writes it: `cpu-<pid>-<tid>.cpuprofile`. */
export function profileFileName(kind: ProfileKind, pid: number, threadId: number): string {
  return kind === 'cpu' ? `cpu-${pid}-${threadId}.cpuprofile` : `${kind}-${pid}-${threadId}.heapprofile`;
}

/**
 * `heap`: allocations (collected objects included) of the load window, or of its first part when
 * the retained view was recorded; `heap-retained`: what was allocated in the rest of the window
 * and was still alive after the full GC the agent forced once the load was over.
 */
export type ProfileKind = 'cpu' | 'heap' | 'heap-retained';

export interface RunMeta {
  version: typeof RUN_DIR_VERSION;
  hotpathVersion: string;
  /** The command that started the target, as given after `--` (or the URL with --url). */
  command: string[];
  cwd: string;
  /** Node version of the target (from its agent), or of hotpath with --url. */
  nodeVersion?: string;
  /** Epoch ms. */
  startedAt: number;
  endedAt?: number;
  /** Phases in order, with epoch ms bounds. */
  phases: { phase: RunPhase; start: number; end?: number }[];
  /** Every process and thread that loaded the agent. */
  processes: {
    pid: number;
    threadId: number;
    ppid?: number;
    argv?: string[];
    isTarget: boolean;
    clusterWorkerId?: number;
    isClusterPrimary?: boolean;
  }[];
  /** The address load was driven at. */
  target?: { url: string; pid?: number; port?: number };
  /** How the run ended. */
  outcome: {
    status: 'completed' | 'target-exited' | 'target-crashed' | 'interrupted' | 'never-listened' | 'failed';
    exitCode?: number | null;
    signal?: string | null;
    /** Human-readable reason when not completed. */
    reason?: string;
    /** Error code when a HotpathError ended the run. */
    code?: string;
    /** Last lines of the target's stderr when it failed. */
    stderrTail?: string[];
    /** Epoch ms the target ended, when it ended on its own (target-exited, target-crashed). */
    at?: number;
  };
  options: Record<string, unknown>;
  /** Profile files in this directory. */
  profiles: { kind: ProfileKind; pid: number; threadId: number; file: string; start: number; end: number }[];
  /** Things that went wrong without ending the run (an agent that never said bye, a protocol mismatch). */
  warnings?: string[];
  /** The pid hotpath spawned (the command after `--`); also the target's process group id. */
  spawnedPid?: number;
  /** Ports the target listened on besides the one load was driven at. */
  otherPorts?: number[];
  /**
   * The call-count window after the load, when the extra load for it was driven
   * (src/run/call-count-window.ts): epoch ms it opened and was read (`latest`: read by the
   * agents at its latest end, the driven threads having finished too few requests in it), and the
   * requests they finished in it by their telemetry as the CLI saw it then.
   */
  callCountWindow?: { from: number; until: number; requests: number; latest?: boolean };
  /**
   * When the measured load left requests unanswered, the extra load after it in which the agents
   * followed the exceptions the app threw (`throws-<pid>-<tid>.json`): epoch ms it started, the
   * requests it got answered and those it left unanswered (in flight at its end or timed out), and
   * epoch ms it ended (`until`, absent before 2026-11-28): the agents note a request left
   * unanswered when its connection closes, so their notes from before `until` are the measured
   * load's, those after it the extra load's (analyze/signals/unanswered-windows.ts).
   */
  throwWindow?: { from: number; answered: number; unanswered: number; until?: number };
}
