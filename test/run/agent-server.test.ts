// AgentServer with real Unix-socket clients: lines split across chunks, every message
// appended to telemetry.ndjson as received, events, control broadcast, malformed input.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, existsSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AgentServer, socketPath } from '../../src/run/agent-server.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-agent-server-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const msg = (type: string, extra: object = {}, pid = 42, threadId = 0) =>
  JSON.stringify({ v: 1, pid, threadId, t: Date.now(), type, ...extra });

async function client(path: string): Promise<Socket> {
  const s = connect(path);
  await once(s, 'connect');
  return s;
}

test('socket paths stay short enough for sun_path', () => {
  assert.ok(socketPath().length <= 100);
});

test('messages are appended as received, split lines are joined, events fire, control reaches every agent', async () => {
  const file = join(dir, 'telemetry.ndjson');
  const server = await AgentServer.start(file);
  try {
    const a = await client(server.path);
    const b = await client(server.path);
    const listened = once(server, 'listen');
    // Both agents heard before the broadcast: a's lines can be read before the server has even
    // accepted b (a client's connect completes in the backlog), and a broadcast reaches only the
    // connections accepted so far.
    const bothHeard = new Promise<void>((resolve) => {
      const pids = new Set<number>();
      server.on('hello', (h) => {
        pids.add(h.pid);
        if (pids.size === 2) resolve();
      });
    });
    const hello = msg('hello', {
      ppid: 1,
      argv: [],
      execArgv: [],
      cwd: '/',
      nodeVersion: 'v20',
      isMainThread: true,
      isClusterPrimary: false,
    });
    const listen = msg('listen', { address: '127.0.0.1', port: 3000 });
    a.write(hello + '\n' + listen.slice(0, 20));
    a.write(listen.slice(20) + '\n');
    b.write(msg('hello', {}, 43) + '\nthis is not json\n');
    const [[m, peer]] = await Promise.all([listened, bothHeard]);
    assert.equal(m.port, 3000);
    assert.equal(peer.pid, 42);

    const received = Promise.all([once(a, 'data'), once(b, 'data')]);
    server.broadcast({ v: 1, type: 'control', cmd: 'flush' });
    const [[ca], [cb]] = await received;
    assert.deepEqual(JSON.parse(String(ca)), { v: 1, type: 'control', cmd: 'flush', seq: 1 });
    assert.equal(String(cb), String(ca));
    const next = once(a, 'data');
    server.broadcast({ v: 1, type: 'control', cmd: 'profile-start' });
    assert.equal(JSON.parse(String((await next)[0])).seq, 2, 'commands are numbered in order');

    const bye = once(server, 'bye');
    a.write(msg('bye', { reason: 'flush' }) + '\n');
    await bye;
    const gone = once(server, 'disconnect');
    b.end();
    await gone;
    assert.deepEqual(
      server.connected().map((p) => p.pid),
      [42],
    );
    assert.equal(server.malformed, 1);
  } finally {
    await server.close();
  }
  const written = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; pid: number });
  assert.deepEqual(written.map((w) => `${w.pid}:${w.type}`).sort(), ['42:bye', '42:hello', '42:listen', '43:hello']);
  assert.ok(!existsSync(server.path), 'the socket file is removed');
});

test('a last line without newline is kept when the agent disconnects; close is idempotent', async () => {
  const file = join(dir, 'telemetry-2.ndjson');
  const server = await AgentServer.start(file);
  const a = await client(server.path);
  const gone = once(server, 'disconnect');
  a.end(msg('sample', { intervalMs: 100 }));
  await gone;
  await server.close();
  await server.close();
  assert.match(readFileSync(file, 'utf8'), /"type":"sample"/);
});

test('the driven server is sent to every agent connected, and again to each one that connects later', async () => {
  const server = await AgentServer.start(join(dir, 'telemetry-3.ndjson'));
  try {
    const early = await client(server.path);
    await new Promise((r) => setTimeout(r, 20));
    const first = once(early, 'data');
    server.setTarget({ port: 3000 });
    const sent = JSON.parse(String((await first)[0]));
    assert.deepEqual(sent, { v: 1, type: 'control', cmd: 'target', port: 3000, seq: 1 });
    // A cluster worker or a worker-thread server connects after the choice: it is told too.
    const late = connect(server.path);
    const [replayed] = await once(late, 'data');
    assert.deepEqual(JSON.parse(String(replayed)), sent);
    late.destroy();
    early.destroy();
  } finally {
    await server.close();
  }
});

test('a profile-start is sent again to each agent that connects while it runs (a cluster worker forked late), not after its profile-stop', async () => {
  const server = await AgentServer.start(join(dir, 'telemetry-late-profile.ndjson'));
  try {
    server.setTarget({ port: 3000 });
    // The lines a connection received within 2 s, or once `count` came.
    const lines = async (s: Socket, count: number): Promise<Record<string, unknown>[]> => {
      let text = '';
      const deadline = Date.now() + 2000;
      s.setEncoding('utf8');
      s.on('data', (chunk: string) => (text += chunk));
      while (text.split('\n').filter(Boolean).length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      return text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    };
    server.broadcast({ v: 1, type: 'control', cmd: 'profile-start', heapRetainedFrom: 123 });
    const late = connect(server.path);
    const got = await lines(late, 2);
    assert.deepEqual(
      got.map((m) => m.cmd),
      ['target', 'profile-start'],
    );
    assert.equal(got[1].heapRetainedFrom, 123, 'the same message, with its times');
    assert.equal(got[1].seq, 2, 'and its seq: an agent with two connections acts on it once');
    server.broadcast({ v: 1, type: 'control', cmd: 'profile-stop' });
    const later = connect(server.path);
    const replayed = await lines(later, 1);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      replayed.map((m) => m.cmd),
      ['target'],
      'after the stop, only the target',
    );
    late.destroy();
    later.destroy();
  } finally {
    await server.close();
  }
});

test('issue 23.2: the socket is 0600 in a 0700 directory of its own, whatever the umask; both are removed on close', async () => {
  const old = process.umask(0o002);
  let server: AgentServer;
  try {
    server = await AgentServer.start(join(dir, 'telemetry-mode.ndjson'));
  } finally {
    process.umask(old);
  }
  try {
    assert.equal(statSync(server.path).mode & 0o777, 0o600);
    assert.equal(statSync(dirname(server.path)).mode & 0o777, 0o700);
    assert.equal(statSync(join(dir, 'telemetry-mode.ndjson')).mode & 0o777, 0o600);
  } finally {
    // A failed check must not leave the server listening: the test file would never exit.
    await server.close();
  }
  assert.ok(!existsSync(dirname(server.path)), 'the socket directory is removed');
});

test('issue 23.2: with a secret, a connection that does not open with it is dropped unheard; the auth line is never recorded', async () => {
  const file = join(dir, 'telemetry-auth.ndjson');
  const secret = 'ab'.repeat(32);
  const server = await AgentServer.start(file, undefined, secret);
  try {
    server.setTarget({ port: 3000 });
    const auth = (s: string) => JSON.stringify({ v: 1, type: 'auth', pid: 42, threadId: 0, secret: s });
    const good = await client(server.path);
    const targetSeen = once(good, 'data');
    good.write(auth(secret) + '\n' + msg('hello') + '\n');
    assert.match(String((await targetSeen)[0]), /"cmd":"target"/, 'the trusted agent gets the target');

    const intruders = [
      msg('hello', {}, 66) + '\n' + msg('listen', { address: '127.0.0.1', port: 6666 }, 66) + '\n',
      auth('cd'.repeat(32)) + '\n' + msg('hello', {}, 67) + '\n',
    ];
    for (const lines of intruders) {
      const bad = await client(server.path);
      let got = '';
      bad.on('data', (c) => {
        got += String(c);
      });
      bad.on('error', () => {});
      const closed = once(bad, 'close');
      bad.write(lines);
      // A bound on a server that never drops it (not a timing assertion): fail, do not hang.
      const dropped = await Promise.race([closed.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 10_000).unref())]);
      bad.destroy();
      assert.ok(dropped, 'the connection without the secret was not dropped');
      assert.equal(got, '', 'no control reaches an intruder');
    }
    assert.equal(server.rejected, 2);
    const listened = once(server, 'listen');
    good.write(msg('listen', { address: '127.0.0.1', port: 3000 }) + '\n');
    await listened;
  } finally {
    await server.close();
  }
  const text = readFileSync(file, 'utf8');
  assert.ok(!text.includes(secret) && !text.includes('"auth"'), 'the secret is not in telemetry.ndjson');
  assert.deepEqual(
    text
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { pid: number }).pid),
    [42, 42],
  );
});
