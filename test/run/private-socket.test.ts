// Issue 23.2: socket directories of hotpath processes that are gone (killed with SIGKILL, no
// chance to clean up) are removed by the next run; a live owner's, or another name, is kept.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanStaleSocketDirs, createPrivateSocketPath, removePrivateSocket } from '../../src/run/private-socket.js';

const parent = mkdtempSync(join(tmpdir(), 'hotpath-private-socket-'));
after(() => rmSync(parent, { recursive: true, force: true }));

/** The pid of a process that has exited (and been reaped): no process has it now. */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
}

test('issue 23.2: stale socket directories whose owner is dead are removed; live or foreign ones are kept', () => {
  const dead = deadPid();
  const stale = join(parent, `hotpath-${dead}-aB3dE9`);
  mkdirSync(stale);
  writeFileSync(join(stale, 'agent.sock'), '');
  const live = join(parent, `hotpath-${process.pid}-Zz9Yy8`);
  mkdirSync(live);
  const other = join(parent, `hotpath-${dead}-reports`);
  mkdirSync(other);
  const removed = cleanStaleSocketDirs(parent);
  assert.deepEqual(removed, [stale]);
  assert.ok(!existsSync(stale));
  assert.ok(existsSync(live) && existsSync(other));
});

test('issue 23.2: a private socket path lies in a fresh 0700 directory named after this process, removed with the socket', () => {
  const path = createPrivateSocketPath();
  assert.match(path, new RegExp(`/hotpath-${process.pid}-[A-Za-z0-9]{6}/agent\\.sock$`));
  assert.ok(path.length <= 100);
  removePrivateSocket(path);
  assert.ok(!existsSync(join(path, '..')));
});
