// Issue 23.2: another local process that finds the agent socket cannot pose as an agent: its
// fake hello + listen (an address of its choosing, a fake pid) is dropped and named in the
// warnings, the load goes to the real target. The run directory is the owner's alone
// (0700/0600), and the socket's private directory is gone after the run.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { apps, runCli } from '../run/helpers/run-cli.js';
import type { RunMeta } from '../../src/run-dir/schema.js';

const work = mkdtempSync(join(tmpdir(), 'hotpath-agent-socket-'));
after(() => rmSync(work, { recursive: true, force: true }));

async function waitForFile(file: string, ms: number): Promise<string> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
    if (existsSync(file) && readFileSync(file, 'utf8') !== '') return readFileSync(file, 'utf8');
  }
  throw new Error(`${file} was not written within ${ms} ms`);
}

test('issue 23.2: a process posing as an agent is dropped; the load goes to the real target; modes are private', async () => {
  let decoyRequests = 0;
  const decoy = http.createServer((_req, res) => {
    decoyRequests++;
    res.end('decoy\n');
  });
  await new Promise<void>((r) => decoy.listen(0, '127.0.0.1', r));
  const decoyPort = (decoy.address() as AddressInfo).port;
  const socketFile = join(work, 'socket-path');
  const out = join(work, 'runs');
  try {
    const run = runCli(
      ['run', '-d', '1', '-c', '2', '-w', '1', '--no-profile', '-o', out, '--', 'node', join(apps, 'reveals-socket.cjs')],
      { env: { SOCKET_FILE: socketFile, START_DELAY_MS: '1500' }, timeoutMs: 60_000 },
    );
    const socketPath = await waitForFile(socketFile, 20_000);
    assert.equal(statSync(socketPath).mode & 0o777, 0o600);
    assert.equal(statSync(dirname(socketPath)).mode & 0o777, 0o700);
    const intruder = connect(socketPath);
    intruder.on('error', () => {});
    const envelope = { v: 1, pid: 4242, threadId: 0, t: Date.now() };
    intruder.write(
      JSON.stringify({
        ...envelope,
        type: 'hello',
        ppid: 1,
        argv: ['node', 'fake.js'],
        execArgv: [],
        cwd: '/',
        nodeVersion: process.version,
        isMainThread: true,
        isClusterPrimary: false,
      }) +
        '\n' +
        JSON.stringify({ ...envelope, type: 'listen', address: '127.0.0.1', port: decoyPort, family: 'IPv4', server: { kind: 'http' } }) +
        '\n',
    );
    const r = await run;
    intruder.destroy();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(decoyRequests, 0, "the load went to the intruder's address");
    const [name] = readdirSync(out);
    const dir = join(out, name);
    const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as RunMeta;
    assert.notEqual(meta.target?.pid, 4242);
    assert.notEqual(meta.target?.port, decoyPort);
    assert.ok(!meta.processes.some((p) => p.pid === 4242), 'the fake pid is not among the processes');
    assert.match((meta.warnings ?? []).join('\n'), /1 connection\(s\) to the agent socket did not present this run's secret/);
    assert.match(r.stderr, /did not present this run's secret/);
    assert.ok(!existsSync(dirname(socketPath)), 'the socket directory is removed after the run');
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    for (const f of readdirSync(dir)) {
      if (['meta.json', 'load.json', 'telemetry.ndjson', 'target.log', 'report.json', 'report.md', 'report.html'].includes(f)) {
        assert.equal(statSync(join(dir, f)).mode & 0o777, 0o600, f);
      }
      assert.doesNotMatch(readFileSync(join(dir, f), 'latin1'), /"secret"|"type":"auth"/, `${f} holds the secret`);
    }
  } finally {
    await new Promise((r) => decoy.close(r));
  }
});
