// Issue 3, "no orphan processes, ever": even when hotpath itself is SIGKILLed (as the OOM
// killer would), the target's whole process group is stopped by the orphan guard; and after
// a normal run no guard process is left behind.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { groupMembers } from '../../src/run/process-group.js';
import { SENTINEL_NAME } from '../../src/run/orphan-guard.js';
import { apps, onlyRunDir, readMeta, runCli, tempOut } from '../run/helpers/run-cli.js';

/** Guard processes watching `pgid` (found by their $0 and arguments in /proc). */
function guardsOf(pgid: number): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const argv = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
      const at = argv.indexOf(SENTINEL_NAME);
      if (at !== -1 && argv[at + 1] === String(pgid)) out.push(Number(e));
    } catch {
      /* gone */
    }
  }
  return out;
}

async function waitUntil(cond: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

interface Killed {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  dir: string;
  /** The target's process group, its live members and its guards just before the SIGKILL. */
  pgid: number;
  members: number[];
  guards: number[];
}

/** Starts `hotpath run` on `file` for a minute and SIGKILLs hotpath once load runs. */
async function killHotpathMidLoad(file: string, flags: string[]): Promise<Killed> {
  const tmp = tempOut();
  after(tmp.cleanup);
  let seen = { pgid: 0, members: [] as number[], guards: [] as number[] };
  const r = await runCli(['run', '-d', '60', '-c', '2', '-w', '1', ...flags, '--out', tmp.out, '--', 'node', file], {
    cwd: apps,
    onSpawn: (child, waitFor) => {
      let stderr = '';
      child.stderr?.on('data', (c: Buffer) => {
        stderr += c;
      });
      void waitFor('hotpath: load:').then(async () => {
        await sleep(300);
        const pgid = Number(/\(pid (\d+)\)/.exec(stderr)?.[1]);
        seen = { pgid, members: groupMembers(pgid), guards: guardsOf(pgid) };
        child.kill('SIGKILL');
      });
    },
  });
  return { ...r, ...seen, dir: onlyRunDir(tmp.out) };
}

describe('no orphan target, even when hotpath is SIGKILLed', { skip: process.platform !== 'linux' && 'reads /proc' }, () => {
  test('hotpath SIGKILLed mid-load: the guard stops the whole group (a cluster primary and its workers)', async () => {
    const k = await killHotpathMidLoad('cluster-server.cjs', []);
    assert.equal(k.signal, 'SIGKILL', k.stderr);
    assert.ok(k.members.length >= 3, `the primary and two workers ran in group ${k.pgid}: ${k.members.join(', ')}`);
    assert.equal(k.guards.length, 1, 'one guard watched the group');
    assert.ok(
      await waitUntil(() => groupMembers(k.pgid).length === 0, 5000),
      `group ${k.pgid} still has ${groupMembers(k.pgid).join(', ')}`,
    );
    assert.ok(await waitUntil(() => guardsOf(k.pgid).length === 0, 3000), 'the guard exits once the group is gone');
  });

  test('a target that ignores SIGTERM gets SIGKILL from the guard after --grace', async () => {
    const k = await killHotpathMidLoad('ignores-sigterm.cjs', ['--grace', '1']);
    assert.equal(k.signal, 'SIGKILL', k.stderr);
    assert.ok(k.members.length >= 1);
    assert.ok(
      await waitUntil(() => groupMembers(k.pgid).length === 0, 6000),
      `group ${k.pgid} still has ${groupMembers(k.pgid).join(', ')}`,
    );
    assert.match(readFileSync(join(k.dir, 'target.log'), 'utf8'), /ignoring SIGTERM/, 'SIGTERM came first');
    assert.ok(await waitUntil(() => guardsOf(k.pgid).length === 0, 3000), 'the guard exits once the group is gone');
  });

  test('a normal run: the guard is dismissed before hotpath exits, no guard process remains', async () => {
    const tmp = tempOut();
    after(tmp.cleanup);
    let guards: number[] = [];
    const r = await runCli(['run', '-d', '1', '-c', '2', '-w', '1', '--out', tmp.out, '--', 'node', 'cjs-server.cjs'], {
      cwd: apps,
      onSpawn: (child, waitFor) => {
        let stderr = '';
        child.stderr?.on('data', (c: Buffer) => {
          stderr += c;
        });
        void waitFor('hotpath: load:').then(() => {
          guards = guardsOf(Number(/\(pid (\d+)\)/.exec(stderr)?.[1]));
        });
      },
    });
    assert.equal(r.code, 0, r.stderr);
    const meta = readMeta(onlyRunDir(tmp.out));
    assert.equal(meta.outcome.status, 'completed');
    assert.equal(guards.length, 1, 'a guard ran during the run');
    const pgid = meta.spawnedPid as number;
    // Dismissed before hotpath exited: gone at once, not after a grace period.
    assert.ok(await waitUntil(() => guardsOf(pgid).length === 0, 500), `guard(s) left: ${guardsOf(pgid).join(', ')}`);
    assert.deepEqual(
      guards.filter((pid) => existsSync(`/proc/${pid}`)),
      [],
    );
  });
});
