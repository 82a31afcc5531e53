// What ended a target that crashed or exited during the run, from the best source at hand: V8's
// fatal error on stderr (a heap out of memory: nothing in the process could report it), else the
// agent's own word (agent/exit-cause.ts: the error no handler took, with Node's origin for it, or
// the frames that called process.exit()), else the agent's throw watch (an exception it followed
// with no handler), else the error and stack Node printed on stderr, else the exit code or signal.

import type { CallSite, ExitCause } from '../../agent/protocol.js';
import type { RunData } from '../../run-dir/run-data.js';
import { parseCrash, parseFrame, type CrashKind } from './crash-report.js';
import { mapCallSite, runResolver } from '../../profile/run-source-maps.js';

export type EndKind = CrashKind | 'signal' | 'exit-call' | 'exit';

export interface EndCause {
  kind: EndKind;
  /** The error's first line or V8's fatal message. */
  error?: string;
  /** The fatal stack or the frames that called process.exit(), innermost first. */
  frames: CallSite[];
  /** Where the frames come from. */
  source?: 'agent' | 'stderr';
  /** Node's `file:line` header above the source line of an uncaught error. */
  thrownAt?: { file: string; line: number };
}

const EMIT_WRAPPER = /(^|\.)emit$/;

/**
 * What ended the target, its frames at their original positions: a stack printed or recorded
 * without `--enable-source-maps` points into the built JavaScript (dist/orders.js), which the
 * run's source maps take back to the file the user edits, as every other culprit is.
 */
export function endCause(run: RunData): EndCause {
  const cause = rawEndCause(run);
  if (cause.frames.length === 0 && !cause.thrownAt) return cause;
  const resolver = runResolver(run);
  const at = cause.thrownAt
    ? mapCallSite({ function: '', file: cause.thrownAt.file, line: cause.thrownAt.line, column: 0 }, resolver)
    : undefined;
  return {
    ...cause,
    frames: cause.frames.map((f) => mapCallSite(f, resolver)),
    ...(at ? { thrownAt: { file: at.file, line: at.line } } : {}),
  };
}

function rawEndCause(run: RunData): EndCause {
  const o = run.meta.outcome;
  const crashed = o.status === 'target-crashed';
  const stderr = crashed ? parseCrash(o.stderrTail ?? []) : undefined;
  if (stderr && (stderr.kind === 'out-of-memory' || stderr.kind === 'fatal-error')) return { ...stderr, source: 'stderr' };
  const seen = exitCauseOf(run);
  const thrownAt = stderr?.thrownAt;
  if (crashed && seen?.uncaught) {
    const [first, ...rest] = seen.uncaught.stack;
    const frames = rest.map(parseFrame).filter((f): f is CallSite => f !== undefined);
    return {
      kind: seen.uncaught.origin === 'unhandledRejection' ? 'unhandled-rejection' : 'uncaught-exception',
      ...(first !== undefined ? { error: first.trim() } : {}),
      frames: frames.length > 0 ? frames : (stderr?.frames ?? []),
      source: frames.length > 0 ? 'agent' : 'stderr',
      ...(thrownAt ? { thrownAt } : {}),
    };
  }
  const watched = crashed ? uncaughtThrow(run) : undefined;
  if (stderr || watched)
    return {
      kind: stderr?.kind ?? 'uncaught-exception',
      ...(stderr?.error !== undefined ? { error: stderr.error } : {}),
      frames: watched?.frames ?? stderr?.frames ?? [],
      source: watched ? 'agent' : 'stderr',
      ...(thrownAt ? { thrownAt } : {}),
    };
  if (typeof o.signal === 'string' && o.signal !== '' && typeof o.exitCode !== 'number') return { kind: 'signal', frames: [] };
  // A loader's wrapper of process.emit (tsx's) sits above the 'exit' listener on every exit, the
  // loop running out included: it is no caller of process.exit().
  const exitCall = (seen?.exitCall ?? []).filter((f) => !EMIT_WRAPPER.test(f.function));
  return { kind: crashed ? 'exit-call' : 'exit', frames: exitCall, ...(exitCall.length > 0 ? { source: 'agent' as const } : {}) };
}

/** The exit cause the served process's main thread sent as it exited (the driven server's pid first). */
function exitCauseOf(run: RunData): ExitCause | undefined {
  const seen = run.threads.filter((t) => t.threadId === 0 && t.exitCause !== undefined && t.listens.length > 0);
  const cause = (seen.find((t) => t.pid === run.meta.target?.pid) ?? seen[0])?.exitCause;
  // Written by another version, or damaged: only the fields of the expected shape.
  if (!cause) return undefined;
  const exitCall = Array.isArray(cause.exitCall) ? cause.exitCall : undefined;
  const u = cause.uncaught;
  const uncaught = u && Array.isArray(u.stack) && u.stack.every((l) => typeof l === 'string') ? u : undefined;
  return { ...(exitCall ? { exitCall } : {}), ...(uncaught ? { uncaught } : {}) };
}

/** The exception the agent's throw watch saw no handler for (the most often thrown such group), when it followed one. */
function uncaughtThrow(run: RunData): { frames: CallSite[] } | undefined {
  const groups = (run.throws ?? []).flatMap((t) => t.groups).filter((g) => g.uncaught && g.frames.length > 0);
  return groups.sort((a, b) => b.count - a.count)[0];
}
