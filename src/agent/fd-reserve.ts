// One file descriptor the agent keeps from its start, for the files it must still write when
// the app has used up the process's descriptors (EMFILE). An app that leaks sockets or files is
// the very run whose profiles matter; without a spare descriptor every write the agent makes
// after the limit fails. The spare is /dev/null opened for reading: not a handle (the active
// resources and the handle hook never see it), one descriptor per thread that runs an agent.
//
// On EMFILE/ENFILE the spare is closed, the work retried at once, synchronously (so the app's
// next socket cannot take the descriptor between the close and the open), and the spare taken
// again after it: each retried write or read gets one descriptor in turn.

import { closeSync, openSync, writeFile, writeFileSync } from 'node:fs';
import { devNull } from 'node:os';

let spare: number | undefined;

/** Takes the spare descriptor (no-op when held; silently none when even that fails). */
export function reserveFd(): void {
  if (spare !== undefined) return;
  try {
    spare = openSync(devNull, 'r');
  } catch {
    spare = undefined;
  }
}

/** Whether a failure is the process (EMFILE) or the system (ENFILE) out of file descriptors. */
export function outOfFds(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'EMFILE' || code === 'ENFILE';
}

/** Runs fn; when it fails for want of a descriptor and the spare is held, gives the spare up for one retry. */
export function withSpareFd<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (!outOfFds(err) || spare === undefined) throw err;
    closeSync(spare);
    spare = undefined;
    try {
      return fn();
    } finally {
      reserveFd();
    }
  }
}

/** fs.writeFile, retried synchronously on the spare descriptor when the process is out of them. */
export function writeFileSpared(path: string, text: string, done: (err: Error | null) => void): void {
  writeFile(path, text, (err) => {
    if (err === null || !outOfFds(err)) return done(err);
    try {
      withSpareFd(() => writeFileSync(path, text));
      done(null);
    } catch (again) {
      done(again instanceof Error ? again : err);
    }
  });
}
