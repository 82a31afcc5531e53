// RunData: a run directory read back into memory, the one input of every analyzer
// (`(run: RunData) => Finding[]`) and of the report writers. Read by read-run-dir.ts, completed
// by profile/read-run.ts (readRunDir).

import type { FunctionRangeRow } from '../agent/profiling/function-ranges.js';
import type {
  HelloMessage,
  ListenMessage,
  SampleMessage,
  GcEvent,
  GrowthMessage,
  StallMessage,
  ErrorMessage,
  PrimaryMessage,
  CallSite,
  ExitCause,
} from '../agent/protocol.js';
import type { LoadResult } from '../load/load-result.js';
import type { ProfileKind, RunMeta } from './schema.js';

/** Everything one agent (one process, or one worker thread of it) reported, in time order. */
export interface ThreadTelemetry {
  pid: number;
  threadId: number;
  hello?: HelloMessage;
  /** Servers this thread started listening on. Non-empty means the thread is a target. */
  listens: ListenMessage[];
  samples: SampleMessage[];
  gc: GcEvent[];
  /** The last growth report (totals are cumulative), and all of them for trends. */
  growth: GrowthMessage[];
  stalls: StallMessage[];
  agentErrors: ErrorMessage[];
  /** How the process ended, when its agent saw it exit: the caller of process.exit(), the uncaught error (agent/exit-cause.ts). */
  exitCause?: ExitCause;
  /**
   * A cluster primary's own stream (role 'cluster-primary'), in time order; empty elsewhere.
   * Never in `samples`: analyses of the serving threads do not see the primary.
   */
  primary?: PrimaryMessage[];
}

export interface ProfileRef {
  kind: ProfileKind;
  pid: number;
  threadId: number;
  /** Absolute path of the profile file. */
  path: string;
  start: number;
  end: number;
  /** Why the file cannot be used (empty, truncated, not a profile, not a tree), when it cannot: views leave it out. */
  unusable?: string;
}

export interface RunData {
  /** Absolute path of the run directory. */
  dir: string;
  meta: RunMeta;
  load?: LoadResult;
  /** One entry per (pid, threadId) that loaded the agent. */
  threads: ThreadTelemetry[];
  profiles: ProfileRef[];
  /** Epoch ms bounds of the measured load window (the 'load' phase), when there was one. */
  loadWindow?: { start: number; end: number };
  /** The target's working directory: culprit paths are made relative to it. */
  cwd: string;
  /** Problems met while reading (a truncated line, a missing profile): kept, not thrown. */
  readWarnings: string[];
  /**
   * Source map URLs the agents captured in the target (script URL → the `sourceMappingURL` V8
   * saw: a `data:` URL from a loader that compiles in memory, or a path), from
   * `sourcemaps-<pid>-<tid>.json`. Call sites in `threads` are mapped with them by readRunDir.
   */
  sourceMaps?: Record<string, string>;
  /**
   * The function ranges of the scripts the CPU profiles sampled, as V8 reported them at the end
   * of the run (script URL → rows), from `functions-<pid>-<tid>.json`: CPU profiles read through
   * src/profile/run-cpu-profile.ts give inlined functions their own nodes with them.
   */
  functionRanges?: Record<string, FunctionRangeRow[]>;
  /** Script URLs by `<pid>:<threadId>:<scriptId>`, for the scripts the agents captured (the functions files' `urls`). */
  scriptUrls?: Record<string, string>;
  /**
   * Calls per function counted by each target thread's agent in a short window near the end of
   * the load (`calls-<pid>-<tid>.json`; docs/agent.md, Call counts): rows in the function-ranges
   * format whose last field is the calls made in the window.
   */
  callCounts?: CallCounts[];
  /** The exceptions each target thread threw after a load that left requests unanswered (`throws-<pid>-<tid>.json`). */
  throws?: ThreadThrows[];
}

/** One thread's followed exceptions, grouped by where each was thrown and where the step from it stopped (agent/profiling/throw-watch.ts). */
export interface ThreadThrows {
  pid: number;
  threadId: number;
  followed: number;
  /** The agent stopped following at its cap: the counts are no rates. */
  capped?: boolean;
  groups: { count: number; uncaught: boolean; frames: CallSite[]; handledAt?: CallSite }[];
}

export interface CallCounts {
  pid: number;
  threadId: number;
  /** Epoch ms the window opened and was read. */
  start: number;
  end: number;
  scripts: Record<string, FunctionRangeRow[]>;
}
