// strayProcesses / stopStrays on real processes: a node process in a session of its own is a
// stray of any other target; a process that is gone is not; SIGTERM first, SIGKILL after the grace.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { AgentPeer } from '../../src/run/agent-server.js';
import { processIds } from '../../src/run/process-group.js';
import { strayProcesses, strayWarning, stopStrays } from '../../src/run/stray-processes.js';

const children: ChildProcess[] = [];
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

async function start(script: string, detached: boolean): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', `${script}; console.log('up'); setInterval(() => {}, 1000)`], {
    detached,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(child);
  await once(child.stdout!, 'data');
  return child;
}

function peer(pid: number, argv = [process.execPath, '/srv/app/worker.js']): AgentPeer {
  return {
    pid,
    threadId: 0,
    hello: { v: 1, pid, threadId: 0, t: Date.now(), type: 'hello', argv } as AgentPeer['hello'],
    listens: [],
    profiles: [],
    closed: false,
    loop: [],
  };
}

test(
  "a live process outside the target's group and session is a stray, named by its command; the target and dead pids are not",
  { skip: process.platform !== 'linux' },
  async () => {
    const child = await start('', true);
    const pid = child.pid!;
    const ids = processIds(pid);
    assert.ok(ids && 'session' in ids && ids.session === pid, 'detached: a session of its own');
    const strays = strayProcesses([peer(pid), peer(pid), peer(process.pid), peer(2 ** 22 + 7)], 999_999);
    assert.deepEqual(strays, [{ pid, command: 'node /srv/app/worker.js', inSession: false }]);
    assert.deepEqual(strayProcesses([peer(pid)], pid), [], 'the target itself');
    assert.match(
      strayWarning(strays[0]),
      new RegExp(`pid ${pid} \\(\`node /srv/app/worker.js\`\\).*still running after the run.*kill ${pid}`),
    );
  },
);

test(
  "a process in the target's session but a group of its own (job control) is in its session",
  { skip: process.platform !== 'linux' },
  async () => {
    // A "target" leading a session of its own starts `sleep` as a background job of bash with job
    // control (set -m): the job gets a group of its own, in the target's session.
    const target = spawn(
      process.execPath,
      [
        '-e',
        `
    const { spawn } = require('node:child_process');
    const sh = spawn('bash', ['-c', 'set -m; sleep 30 & echo $!'], { stdio: ['ignore', 'pipe', 'ignore'] });
    sh.stdout.on('data', (d) => console.log(String(d).trim()));
    setInterval(() => {}, 1000);`,
      ],
      { detached: true, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    children.push(target);
    const [line] = (await once(target.stdout!, 'data')) as [Buffer];
    const jobPid = Number(String(line).trim());
    after(() => {
      try {
        process.kill(jobPid, 'SIGKILL');
      } catch {
        /* gone */
      }
    });
    const ids = processIds(jobPid);
    assert.ok(ids && 'pgrp' in ids && ids.pgrp === jobPid && ids.session === target.pid, JSON.stringify(ids));
    assert.deepEqual(strayProcesses([peer(jobPid, ['/usr/bin/sleep', '30'])], target.pid!), [
      { pid: jobPid, command: 'sleep 30', inSession: true },
    ]);
  },
);

test('stopStrays: SIGTERM, then SIGKILL for one that ignores it after the grace', async () => {
  const polite = await start('', true);
  const stubborn = await start("process.on('SIGTERM', () => {})", true);
  const how = await stopStrays(
    [
      { pid: polite.pid!, command: 'polite', inSession: true },
      { pid: stubborn.pid!, command: 'stubborn', inSession: true },
    ],
    500,
  );
  assert.equal(how.get(polite.pid!), 'terminated');
  assert.equal(how.get(stubborn.pid!), 'killed');
  assert.equal(processIds(polite.pid!), undefined);
  assert.equal(processIds(stubborn.pid!), undefined);
  assert.match(strayWarning({ pid: 1, command: 'x', inSession: true }, 'killed'), /stopped it \(SIGKILL after --grace\)/);
});
