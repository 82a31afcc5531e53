// waitForListen's time-out when the target's event loop is blocked without a break (its agent's
// watchdog keeps reporting a stall under way): the error says so, instead of advising a longer
// --ready-timeout. A real agent server, a real target process, and a client speaking the agent
// protocol for the stalled thread.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentServer } from '../../src/run/agent-server.js';
import { agentBundlePath } from '../../src/run/node-options.js';
import { TargetProcess } from '../../src/run/target-process.js';
import { chooseListen, HELPER_SETTLE_MS, waitForListen } from '../../src/run/wait-for-listen.js';
import type { AgentPeer } from '../../src/run/agent-server.js';
import { HotpathError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-wait-listen-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function timeoutMessage(stallMs: number | undefined): Promise<string> {
  const server = await AgentServer.start(join(dir, `telemetry-${stallMs}.ndjson`));
  const target = await TargetProcess.start({
    command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'],
    cwd: dir,
    env: process.env,
    agentPath: agentBundlePath(),
    socketPath: server.path,
    runDir: dir,
    logFile: join(dir, `target-${stallMs}.log`),
    graceMs: 1000,
    agentConfig: { intervalMs: 100, cpuSamplingIntervalUs: 1000, heap: false, hooks: false, heapSample: false },
  });
  try {
    const client = connect(server.path);
    await once(client, 'connect');
    const line = (type: string, extra: object) => JSON.stringify({ v: 1, pid: 777, threadId: 0, t: Date.now(), type, ...extra }) + '\n';
    client.write(
      line('hello', {
        ppid: 1,
        argv: ['node', 'app.js'],
        execArgv: [],
        cwd: dir,
        nodeVersion: process.version,
        isMainThread: true,
        isClusterPrimary: false,
      }),
    );
    if (stallMs !== undefined) client.write(line('stall', { start: Date.now() - stallMs, durationMs: stallMs, ongoing: true }));
    const err = await waitForListen(server, target, { timeoutMs: 1000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    client.destroy();
    assert.ok(err instanceof HotpathError && err.code === 'HOTPATH_ERR_READY_TIMEOUT', String(err));
    return err.message;
  } finally {
    await target.stop(1000);
    await server.close();
  }
}

test('a loop blocked without a break: the time-out says so, and that a longer --ready-timeout will not help', async () => {
  const message = await timeoutMessage(2500);
  assert.match(message, /The event loop of pid 777 has been blocked for 2\.5 s without a break/);
  assert.match(message, /a longer --ready-timeout will not help/);
  assert.doesNotMatch(message, /Raise --ready-timeout/);
});

test('no stall under way: the usual advice', async () => {
  assert.match(await timeoutMessage(undefined), /Raise --ready-timeout if it starts slowly/);
});

/** A process that loaded the agent (a connected peer), with the HTTP servers it opened at times `t`. */
function peerOf(
  pid: number,
  ppid: number,
  listens: { port: number; t: number }[],
  extra: { clusterWorkerId?: number; closed?: boolean; argv?: string[] } = {},
): AgentPeer {
  const envelope = { v: 1 as const, pid, threadId: 0 };
  return {
    pid,
    threadId: 0,
    hello: {
      ...envelope,
      t: 0,
      type: 'hello',
      ppid,
      argv: extra.argv ?? ['node', join(dir, `app-${pid}.js`)],
      execArgv: [],
      cwd: dir,
      nodeVersion: process.version,
      isMainThread: true,
      isClusterPrimary: false,
      ...(extra.clusterWorkerId !== undefined ? { clusterWorkerId: extra.clusterWorkerId } : {}),
    },
    listens: listens.map((l) => ({ ...envelope, t: l.t, type: 'listen', address: '127.0.0.1', port: l.port, server: { kind: 'http' } })),
    profiles: [],
    closed: extra.closed ?? false,
    loop: [],
  };
}

test('the server a helper child opens first waits for the app that started it; cluster workers and lone children are driven at once', () => {
  const t0 = 1_000_000;
  // The app (pid 10) forks an upstream stub (pid 11) that listens first, then opens its own server.
  const app = peerOf(10, 1, []);
  const stub = peerOf(11, 10, [{ port: 4001, t: t0 }]);
  assert.equal(chooseListen({ peers: [app, stub] }, undefined, t0 + 100), undefined, 'the parent may still open one');
  const appListening = peerOf(10, 1, [{ port: 3000, t: t0 + 300 }]);
  assert.equal(chooseListen({ peers: [stub, appListening] }, undefined, t0 + 300)?.listen.port, 3000);
  // The parent never opens one (a launcher, a supervisor): the child's, once the wait is over or the parent is gone.
  assert.equal(chooseListen({ peers: [app, stub] }, undefined, t0 + HELPER_SETTLE_MS)?.listen.port, 4001);
  assert.equal(chooseListen({ peers: [peerOf(10, 1, [], { closed: true }), stub] }, undefined, t0 + 10)?.listen.port, 4001);
  // A cluster worker is the app, not a helper; --port still decides alone.
  const worker = peerOf(12, 10, [{ port: 3000, t: t0 }], { clusterWorkerId: 1 });
  assert.equal(chooseListen({ peers: [app, worker] }, undefined, t0 + 1)?.peer.pid, 12);
  assert.equal(chooseListen({ peers: [app, stub] }, 4001, t0 + 1)?.listen.port, 4001);
});

test('the server a launched child opens is driven at once: a launcher (tsx, npm) never opens one of its own', () => {
  const t0 = 1_000_000;
  const app = join(dir, 'app.ts');
  const child = (ppid: number) => peerOf(21, ppid, [{ port: 3000, t: t0 }], { argv: ['/usr/bin/node', app] });
  // tsx's CLI, found by its package and by its argument naming the child's script.
  const tsx = peerOf(20, 1, [], { argv: ['/usr/bin/node', '/w/node_modules/tsx/dist/cli.mjs', 'app.ts'] });
  assert.equal(chooseListen({ peers: [tsx, child(20)] }, undefined, t0 + 1)?.peer.pid, 21);
  // npm start, a launcher by its package alone (its arguments name no script).
  const npm = peerOf(20, 1, [], { argv: ['/usr/bin/node', '/usr/lib/node_modules/npm/bin/npm-cli.js', 'start'] });
  assert.equal(chooseListen({ peers: [npm, child(20)] }, undefined, t0 + 1)?.peer.pid, 21);
  // A runner hotpath does not know, which names the script the child runs.
  const runner = peerOf(20, 1, [], { argv: ['/usr/bin/node', '/opt/run-ts/bin.js', '--watch', './app.ts'] });
  assert.equal(chooseListen({ peers: [runner, child(20)] }, undefined, t0 + 1)?.peer.pid, 21);
  // An app that forks a helper is no launcher, even from node_modules of its own (a package named like one is not).
  const server = peerOf(20, 1, [], { argv: ['/usr/bin/node', '/w/node_modules/tsx-app/server.js'] });
  const helper = peerOf(21, 20, [{ port: 4001, t: t0 }], { argv: ['/usr/bin/node', '/w/node_modules/tsx-app/stub.js'] });
  assert.equal(chooseListen({ peers: [server, helper] }, undefined, t0 + 1), undefined);
});
