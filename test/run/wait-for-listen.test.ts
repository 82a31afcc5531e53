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
import { waitForListen } from '../../src/run/wait-for-listen.js';
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
