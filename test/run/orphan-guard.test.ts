// The orphan guard on its own: dismissed, it exits and leaves the group alone; when the process
// that started it dies without dismissing it, it stops the group (SIGTERM, then SIGKILL).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { OrphanGuard } from '../../src/run/orphan-guard.js';
import { groupAlive, stopGroup } from '../../src/run/process-group.js';
import { processAlive as alive } from './helpers/run-cli.js';

const skip = process.platform !== 'linux' && 'reads /proc';
const guardModule = fileURLToPath(new URL('../../src/run/orphan-guard.js', import.meta.url));

function spawnGroup(script: string): number {
  const child = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid as number;
}

async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) return false;
    await sleep(25);
  }
  return true;
}

test('dismissed, the guard exits at once and kills nothing', { skip }, async () => {
  const pgid = spawnGroup('sleep 30 & sleep 30 & wait');
  const guard = OrphanGuard.start(pgid, 200);
  assert.ok(guard?.pid);
  await sleep(100);
  guard.dismiss();
  guard.dismiss();
  assert.ok(await waitFor(() => !alive(guard.pid as number), 2000), 'the guard exited');
  await sleep(300);
  assert.ok(groupAlive(pgid), 'the group was left alone');
  await stopGroup(pgid, 1000);
});

test('its parent dies without a word: the guard stops the group, SIGKILL for what ignores SIGTERM', { skip }, async () => {
  // A stand-in for hotpath: starts a group that ignores SIGTERM and a guard, then waits to be killed.
  const code = `
    const { spawn } = require('node:child_process');
    const target = spawn('sh', ['-c', 'trap "" TERM; sleep 30 & wait'], { detached: true, stdio: 'ignore' });
    import(${JSON.stringify(guardModule)}).then(({ OrphanGuard }) => {
      const guard = OrphanGuard.start(target.pid, 300);
      process.stdout.write(target.pid + ' ' + guard.pid + '\\n');
      setInterval(() => {}, 1000);
    });`;
  const parent = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(parent.stdout, 'data')) as [Buffer];
  const [pgid, guardPid] = String(line).trim().split(' ').map(Number);
  await sleep(200);
  assert.ok(groupAlive(pgid));
  parent.kill('SIGKILL');
  await sleep(150);
  assert.ok(groupAlive(pgid), 'SIGTERM is ignored: the group waits out the grace period');
  assert.ok(await waitFor(() => !groupAlive(pgid), 3000), 'then it is killed');
  assert.ok(await waitFor(() => !alive(guardPid), 2000), 'and the guard is gone');
});
