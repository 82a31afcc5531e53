// The last line of defence against an orphaned target: hotpath stops the target's process
// group on every path it controls, but SIGKILL (or the OOM killer) gives it no chance to.
// A tiny /bin/sh sentinel, detached into a session of its own (a terminal's Ctrl-C or hang-up
// does not reach it), blocks reading a pipe whose only writer is hotpath:
//
//   hotpath ──pipe (stdin)──▶ sentinel: read
//     dismiss(): one line   ─▶ read succeeds ─▶ exit, nothing killed
//     hotpath dies: EOF     ─▶ read fails    ─▶ SIGTERM to the group, SIGKILL after the grace
//
// The pipe is a close-on-exec socketpair, so neither the target nor anything spawned later
// holds a copy that would keep it open. hotpath dismisses the sentinel as soon as it knows the
// group is empty, which keeps the window in which the group id could be reused by an unrelated
// group (the kernel must hand out every other pid first) to a few milliseconds.

import { spawn, type ChildProcess } from 'node:child_process';

/** The sentinel's $0: names it in `ps` (and lets tests find it). */
export const SENTINEL_NAME = 'hotpath-orphan-guard';

/** $1: the group id; $2: the grace period in tenths of a second. */
const SCRIPT = [
  'read -r _ && exit 0',
  'kill -TERM -"$1" 2>/dev/null || exit 0',
  'i=0',
  'while [ "$i" -lt "$2" ] && kill -0 -"$1" 2>/dev/null; do sleep 0.1; i=$((i+1)); done',
  'kill -KILL -"$1" 2>/dev/null',
  'exit 0',
].join('\n');

export class OrphanGuard {
  private dismissed = false;

  private constructor(private readonly child: ChildProcess) {}

  /** Best effort: without /bin/sh (or on Windows, which has no process groups) there is no guard. */
  static start(pgid: number, graceMs: number): OrphanGuard | undefined {
    if (process.platform === 'win32') return undefined;
    const tenths = Math.max(1, Math.ceil(graceMs / 100));
    let child: ChildProcess;
    try {
      child = spawn('/bin/sh', ['-c', SCRIPT, SENTINEL_NAME, String(pgid), String(tenths)], {
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore'],
      });
    } catch {
      return undefined;
    }
    child.on('error', () => {
      /* could not start: no guard, the normal paths still stop the group */
    });
    child.stdin?.on('error', () => {
      /* the sentinel is gone already */
    });
    // Neither the sentinel nor its pipe may keep hotpath alive.
    child.unref();
    (child.stdin as unknown as { unref?(): void } | null)?.unref?.();
    return new OrphanGuard(child);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The group is gone (or certainly going): the sentinel exits without killing anything. Idempotent. */
  dismiss(): void {
    if (this.dismissed) return;
    this.dismissed = true;
    const stdin = this.child.stdin;
    if (stdin === null || stdin.destroyed) return;
    // libuv writes at once when nothing is queued, so this lands even if hotpath exits right after.
    stdin.end('ok\n');
  }
}
