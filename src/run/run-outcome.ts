// How a run ended, as meta.json's `outcome` says it: completed, interrupted, the target
// ending on its own (exited or crashed), never listening, or another failure.

import { isHotpathError } from '../errors.js';
import type { RunMeta } from '../run-dir/schema.js';
import type { ExitStatus } from './target-process.js';

type Outcome = RunMeta['outcome'];
type Phases = RunMeta['phases'];

export function describeExit(s: ExitStatus): string {
  return s.signal ? `was killed by ${s.signal}` : `exited with code ${s.code}`;
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

/** The target ended on its own before hotpath stopped it: exit code 0 is an exit, anything else a crash. */
export function endedOutcome(exit: ExitStatus | undefined, phases: Phases, stderrTail?: string[]): Outcome {
  const crashed = !exit || exit.signal !== null || exit.code !== 0;
  const during = phases.find((p) => exit && p.start <= exit.at && (p.end ?? Infinity) >= exit.at)?.phase ?? lastRunPhase(phases);
  return {
    status: crashed ? 'target-crashed' : 'target-exited',
    reason: `The target ${exit ? describeExit(exit) : 'ended'} during the ${during} phase`,
    stderrTail,
  };
}
