// What the in-process agents reported they failed to do (`agent-error` messages: a hook that
// threw, a collector or the profiler that could not start), per process and thread, with
// whether that thread is one load was driven at. The report shows them all; only a failure in
// a target process makes the diagnosis incomplete (a launcher's agent does not measure the app).

import type { RunData } from '../../run-dir/run-data.js';
import { targetThreads } from './load-window.js';

export interface AgentErrorRow {
  pid: number;
  threadId: number;
  /** The part of the agent that failed (`sampler`, `profiler`, `hook:route-growth`...). */
  what: string;
  message: string;
  /** It happened in a target process (one that served the load). */
  target: boolean;
}

/**
 * Notes the agent reports as errors but that cost the diagnosis no data: a refused setting
 * (replaced by its default); an RSS read that failed (out of file descriptors: the samples go on
 * with V8's heap figures, the RSS repeats its last reading).
 */
const NOT_A_FAILURE: ReadonlySet<string> = new Set(['config', 'rss']);

/** The agent errors of target processes that say the process ran out of file descriptors. */
export function outOfFds(run: RunData): AgentErrorRow[] {
  return agentErrorsOf(run).filter((e) => e.target && /\bEMFILE\b|too many open files/i.test(e.message));
}

/** Every agent error of the run, target processes first, each (pid, thread, what) once. */
export function agentErrorsOf(run: RunData): AgentErrorRow[] {
  const targetPids = new Set([
    ...targetThreads(run).map((t) => t.pid),
    ...(run.meta.processes ?? []).filter((p) => p.isTarget).map((p) => p.pid),
  ]);
  const seen = new Set<string>();
  const rows: AgentErrorRow[] = [];
  for (const t of run.threads) {
    for (const e of t.agentErrors ?? []) {
      const what = typeof e.what === 'string' ? e.what : 'unknown';
      const key = `${t.pid}:${t.threadId}:${what}`;
      if (seen.has(key)) continue;
      seen.add(key);
      rows.push({
        pid: t.pid,
        threadId: t.threadId,
        what,
        message: typeof e.message === 'string' ? e.message : String(e.message),
        target: targetPids.has(t.pid),
      });
    }
  }
  return rows.sort((a, b) => Number(b.target) - Number(a.target));
}

/** The errors that cost the diagnosis data: failed parts of a target process's agent. */
export function failedParts(run: RunData): AgentErrorRow[] {
  return agentErrorsOf(run).filter((e) => e.target && !NOT_A_FAILURE.has(e.what));
}
