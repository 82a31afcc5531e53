// How a run ended, as meta.json's `outcome` says it: completed, interrupted, the target
// ending on its own (exited or crashed), never listening, or another failure.

import { hotpathError, isHotpathError } from '../errors.js';
import type { RunMeta } from '../run-dir/schema.js';
import type { ExitStatus } from './target-process.js';

type Outcome = RunMeta['outcome'];

/**
 * stderr lines kept when the target ended on its own: its error and stack, or V8's "FATAL ERROR:
 * ... heap out of memory" above a native stack of 10-20 lines (Node 20: 16 lines in all).
 */
export const ENDED_STDERR_LINES = 40;
type Phases = RunMeta['phases'];

export function describeExit(s: ExitStatus): string {
  if (s.signal) return `was killed by ${s.signal}`;
  // A process hotpath did not spawn (served-end.ts) has no exit status but its agent's word.
  if (s.code === null) return 'ended without an exit code (killed by a signal, or its agent could not say)';
  return `exited with code ${s.code}`;
}

/** The last phase of the run proper (cooldown and stopping are hotpath's own). */
function lastRunPhase(phases: Phases): string {
  return phases.filter((p) => p.phase !== 'cooldown' && p.phase !== 'stopping').at(-1)?.phase ?? 'starting';
}

export function interruptedOutcome(phases: Phases): Outcome {
  return { status: 'interrupted', reason: `Interrupted (Ctrl-C) during the ${lastRunPhase(phases)} phase` };
}

export function failureOutcome(err: unknown, stderrTail?: string[]): Outcome {
  const code = isHotpathError(err) ? err.code : undefined;
  const neverListened = code === 'HOTPATH_ERR_READY_TIMEOUT' || code === 'HOTPATH_ERR_TARGET_EXITED';
  const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
  return { status: neverListened ? 'never-listened' : 'failed', reason, code, stderrTail };
}

/**
 * The target ended on its own before hotpath stopped it: exit code 0 is an exit, anything else a
 * crash. `who` names the process when it is not the one hotpath spawned (a watcher's child).
 */
export function endedOutcome(exit: ExitStatus | undefined, phases: Phases, stderrTail?: string[], who?: string): Outcome {
  const crashed = !exit || exit.signal !== null || exit.code !== 0;
  const during = phases.find((p) => exit && p.start <= exit.at && (p.end ?? Infinity) >= exit.at)?.phase ?? lastRunPhase(phases);
  return {
    status: crashed ? 'target-crashed' : 'target-exited',
    reason: `The target${who ? ` (${who})` : ''} ${exit ? describeExit(exit) : 'ended'} during the ${during} phase`,
    stderrTail,
    ...(exit ? { at: exit.at } : {}),
  };
}

/**
 * The load's first connection refused while the target that listened still runs: it closed its
 * server after start-up (server.close(), a shutdown path taken at once) or listens elsewhere now.
 * Said instead of "is the server running?", which it is. Other errors are returned as they are.
 */
export function refusedWhileRunning(err: unknown, pid: number, address: string): unknown {
  if (!isHotpathError(err) || err.code !== 'HOTPATH_ERR_CONNECT') return err;
  const errno = /\((E[A-Z]+)\)/.exec(err.message)?.[1] ?? 'refused';
  return hotpathError(
    'HOTPATH_ERR_CONNECT',
    `pid ${pid} listened on ${address} and still runs, yet refuses connections there (${errno}): it closed its server after start-up (server.close(), a shutdown path) or listens elsewhere now. Nothing was measured.`,
    { cause: err, details: { address, errno, pid } },
  );
}
