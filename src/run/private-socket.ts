// Where the agents' Unix socket lives: a fresh directory of hotpath's own, 0700, named after
// the hotpath process that owns it (`hotpath-<pid>-XXXXXX/agent.sock`), so another local user
// can neither connect nor replace it whatever the umask. A hotpath that is killed (SIGKILL)
// cannot remove its directory: the next run removes the ones whose owner process is gone.

import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

/** sun_path holds ~107 bytes on Linux and 104 on macOS: stay well below. */
const MAX_SOCKET_PATH = 100;
const SOCKET_NAME = 'agent.sock';
/** `hotpath-<pid>-<random>`: a socket directory (and the older `hotpath-<pid>-<random>.sock` files). */
const OWNED = /^hotpath-(\d+)-[A-Za-z0-9]{6}(\.sock)?$/;

/** The parent of socket directories: the temp dir, or /tmp when TMPDIR is long (macOS). */
function socketParent(): string {
  const room = MAX_SOCKET_PATH - `/hotpath-${process.pid}-XXXXXX/${SOCKET_NAME}`.length;
  return tmpdir().length <= room ? tmpdir() : '/tmp';
}

/** Creates a private 0700 directory and returns the socket path inside it (not created yet). */
export function createPrivateSocketPath(): string {
  const parent = socketParent();
  cleanStaleSocketDirs(parent);
  // mkdtemp creates the directory 0700 (and atomically: an existing name is never reused).
  return join(mkdtempSync(join(parent, `hotpath-${process.pid}-`)), SOCKET_NAME);
}

/** Removes a socket made by createPrivateSocketPath and its directory; any other path alone. Never throws. */
export function removePrivateSocket(path: string): void {
  try {
    const dir = dirname(path);
    if (basename(path) === SOCKET_NAME && OWNED.test(basename(dir))) rmSync(dir, { recursive: true, force: true });
    else rmSync(path, { force: true });
  } catch {
    /* already gone, or not ours to remove */
  }
}

/**
 * Removes the socket directories (and old socket files) in `parent` that belong to this user
 * and whose owning hotpath process no longer exists. Never throws: a directory it cannot
 * judge or remove is left alone.
 */
export function cleanStaleSocketDirs(parent: string): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const m = OWNED.exec(name);
    if (m === null || Number(m[1]) === process.pid || processAlive(Number(m[1]))) continue;
    const path = join(parent, name);
    try {
      const st = lstatSync(path);
      if (uid !== undefined && st.uid !== uid) continue;
      if (!(st.isDirectory() || st.isSocket())) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      /* raced with its owner or another run */
    }
  }
  return removed;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, as another user's process.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
