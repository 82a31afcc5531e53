// Stopping a whole process group: every member gets SIGTERM; members that ignore it are
// killed after the grace period; nothing survives.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { groupAlive, groupMembers, stopGroup } from '../../src/run/process-group.js';

function spawnGroup(script: string): number {
  const child = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid as number;
}

async function waitMembers(pgid: number, n: number): Promise<void> {
  for (let i = 0; i < 100 && groupMembers(pgid).length < n; i++) await sleep(20);
}

test('SIGTERM stops a group of well-behaved processes', async () => {
  const pgid = spawnGroup('sleep 30 & sleep 30 & wait');
  await waitMembers(pgid, 3);
  assert.ok(groupMembers(pgid).length >= 3, 'the shell and its two children');
  assert.equal(await stopGroup(pgid, 5000), 'terminated');
  assert.equal(groupAlive(pgid), false);
});

test('a member that ignores SIGTERM is killed after the grace period', async () => {
  const code = "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000); process.stdout.write('ready')";
  const child = spawn(process.execPath, ['-e', code], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  await once(child.stdout, 'data'); // its SIGTERM handler is installed
  child.unref();
  const pgid = child.pid as number;
  assert.equal(await stopGroup(pgid, 300), 'killed');
  assert.equal(groupAlive(pgid), false);
});

test('an empty group is reported as such', async () => {
  const pgid = spawnGroup('exit 0');
  for (let i = 0; i < 100 && groupAlive(pgid); i++) await sleep(20);
  assert.equal(await stopGroup(pgid, 100), 'empty');
});
