// The agent across process shapes: a wrapper process (node spawning node) stays silent and
// exits normally, a cluster of 2 workers reports 2 listening processes, a worker-thread server
// reports from its own thread and profiles its own isolate, a worker thread that ends at once
// stays silent.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ListenMessage, ProfileMessage, SampleMessage, StallMessage } from '../../src/agent/protocol.js';
import { Collector, launch, within, get, getMany, destroyKeepAlive } from './helpers/agent-harness.js';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
  destroyKeepAlive();
});

async function collector(): Promise<Collector> {
  const c = new Collector();
  await c.start();
  cleanups.push(() => c.close());
  return c;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

test('a wrapper process says hello but not listen; its child is the target; the wrapper exits normally', async () => {
  const c = await collector();
  const t = launch(c, ['wrapper.cjs']);
  cleanups.push(() => t.kill());
  const listen = await c.waitForListen();
  await c.waitFor(() => c.of('hello').length >= 2, 5000, 'two hellos');
  const wrapperHello = c.of('hello').find((h) => h.pid === t.child.pid)!;
  const childHello = c.of('hello').find((h) => h.pid === listen.pid)!;
  assert.ok(wrapperHello.argv.some((a) => a.endsWith('wrapper.cjs')));
  assert.equal(childHello.ppid, t.child.pid);
  assert.notEqual(listen.pid, t.child.pid);
  assert.equal((await get(listen.port!, '/')).body, 'ok');
  await c.waitFor((m) => m.type === 'sample' && m.pid === listen.pid, 5000, 'target samples');
  assert.equal(c.messages.filter((m) => m.type === 'sample' && m.pid === t.child.pid).length, 0, 'the wrapper does not sample');
  assert.equal(c.of('listen').filter((l) => l.pid === t.child.pid).length, 0);
  process.kill(listen.pid, 'SIGTERM');
  const exit = await within(t.exited, 10_000, 'wrapper exit');
  assert.deepEqual(exit, { code: 0, signal: null });
});

test('a cluster with 2 workers reports 2 listening processes, each with its cluster worker id', async () => {
  const c = await collector();
  const port = await freePort();
  const t = launch(c, ['cluster.cjs'], { env: { FIXTURE_PORT: String(port) } });
  cleanups.push(async () => {
    t.child.kill('SIGTERM');
    await within(t.exited, 10_000, 'cluster exit').catch(() => t.kill());
  });
  const workerListens = () => c.of('listen').filter((l) => !l.clusterPrimary);
  await c.waitFor(() => new Set(workerListens().map((l) => l.pid)).size >= 2, 15_000, 'two listening workers');
  const pids = [...new Set(workerListens().map((l) => l.pid))];
  assert.equal(pids.length, 2);
  assert.ok(!pids.includes(t.child.pid!), 'the workers are not the primary');
  for (const l of workerListens()) {
    assert.equal(l.port, port);
    assert.equal(l.server?.kind, 'http');
  }
  // The primary's shared handle is reported as such (it accepts, the workers serve).
  for (const l of c.of('listen').filter((x) => x.clusterPrimary)) assert.equal(l.pid, t.child.pid);
  const ids = pids.map((pid) => c.of('hello').find((h) => h.pid === pid)?.clusterWorkerId).sort();
  assert.deepEqual(ids, [1, 2]);
  await c.waitFor((m) => m.type === 'hello' && m.pid === t.child.pid && m.isClusterPrimary, 5000, 'the primary says it is one');
  await getMany(port, '/', 40, 4);
  await c.waitFor(
    () => {
      const finished = c.messages
        .filter((m): m is SampleMessage => m.type === 'sample' && pids.includes(m.pid))
        .reduce((n, s) => n + (s.http?.finished ?? 0), 0);
      return finished >= 40;
    },
    10_000,
    'requests counted across the workers',
  );
});

test('a worker-thread server reports from its own thread and profiles its own isolate', async () => {
  const c = await collector();
  const t = launch(c, ['worker-thread.cjs']);
  cleanups.push(() => t.kill());
  const listen = await c.waitFor((m): m is ListenMessage => m.type === 'listen', 10_000, 'listen');
  assert.ok(listen.threadId >= 1);
  assert.equal(listen.pid, t.child.pid);
  const hello = c.of('hello').find((h) => h.threadId === listen.threadId)!;
  assert.equal(hello.isMainThread, false);
  c.send({ cmd: 'profile-start' });
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await get(listen.port!, '/')).body, 'from worker');
  await getMany(listen.port!, '/', 30);
  c.send({ cmd: 'profile-stop' });
  const profile = await c.waitFor((m): m is ProfileMessage => m.type === 'profile', 10_000, 'profile');
  assert.equal(profile.threadId, listen.threadId);
  assert.equal(profile.file, `cpu-${listen.pid}-${listen.threadId}.cpuprofile`);
  assert.ok(existsSync(join(c.dir, profile.file)));
  await c.waitFor((m) => m.type === 'sample' && m.threadId === listen.threadId && (m.http?.finished ?? 0) > 0, 5000, 'worker samples');
});

test('a worker thread that ends at once never starts the agent; one that stays says hello after a while', async () => {
  const c = await collector();
  const t = launch(c, ['worker-lifetimes.cjs']);
  cleanups.push(() => t.kill());
  const listen = await c.waitForListen();
  const short: number[] = [];
  for (let i = 0; i < 5; i++) short.push(Number((await get(listen.port!, '/short')).body));
  const long = Number((await get(listen.port!, '/long')).body);
  const hello = await c.waitFor((m) => m.type === 'hello' && m.threadId === long, 5000, "the lasting worker thread's hello");
  assert.equal(hello.pid, listen.pid);
  assert.deepEqual(
    c.of('hello').filter((h) => short.includes(h.threadId)),
    [],
    'the short-lived threads stayed silent',
  );
  assert.equal(c.of('listen').filter((l) => l.threadId === long).length, 0, 'the pool thread is no target');
});

test('a worker-thread target blocked for 1.5 s reports the stall from its own thread while it lasts', async () => {
  const c = await collector();
  const t = launch(c, ['worker-thread.cjs']);
  cleanups.push(() => t.kill());
  const listen = await c.waitFor((m): m is ListenMessage => m.type === 'listen', 10_000, 'listen');
  let ended = false;
  const blocked = get(listen.port!, '/block?ms=1500', false).then(() => {
    ended = true;
  });
  const first = await c.waitFor((m): m is StallMessage => m.type === 'stall', 10_000, 'stall');
  assert.equal(ended, false, 'reported while the worker thread was still blocked');
  assert.equal(first.threadId, listen.threadId);
  await blocked;
  const final = await c.waitFor((m): m is StallMessage => m.type === 'stall' && !m.ongoing, 5000, 'final stall');
  assert.ok(final.durationMs >= 1400, `duration ${final.durationMs}`);
});
