// Which processes are targets: the ones serving the port the load was driven at; a helper
// server the app starts on another port (an upstream stub in a child process) is not one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { otherPorts, otherPortsWarning, portOwners, processesSeen } from '../../src/run/run-meta.js';
import type { AgentPeer } from '../../src/run/agent-server.js';
import type { ListenMessage } from '../../src/agent/protocol.js';

const listen = (pid: number, port: number, extra: Partial<ListenMessage> = {}): ListenMessage => ({
  v: 1,
  pid,
  threadId: 0,
  t: 0,
  type: 'listen',
  address: '127.0.0.1',
  port,
  server: { kind: 'http', keepAliveTimeout: 5000, headersTimeout: 60000 },
  ...extra,
});
const peer = (pid: number, ppid: number, listens: ListenMessage[]): AgentPeer => ({
  pid,
  threadId: 0,
  listens,
  profiles: [],
  closed: false,
  loop: [],
  hello: {
    v: 1,
    pid,
    threadId: 0,
    t: 0,
    type: 'hello',
    ppid,
    argv: ['node'],
    cwd: '/app',
    nodeVersion: 'v20.0.0',
    isMainThread: true,
  } as AgentPeer['hello'],
});

test('the server on the driven port is the target; the upstream child on another port is not', () => {
  const peers = [peer(10, 1, [listen(10, 3000)]), peer(11, 10, [listen(11, 4000)])];
  const seen = processesSeen(peers, 3000);
  assert.deepEqual(
    seen.map((p) => [p.pid, p.isTarget]),
    [
      [10, true],
      [11, false],
    ],
  );
});

test('without a driven port (a Unix socket, or before the load), every HTTP server is one', () => {
  const peers = [
    peer(10, 1, [listen(10, 3000)]),
    peer(11, 10, [listen(11, 4000)]),
    peer(12, 10, [listen(12, 5000, { server: { kind: 'net' } })]),
  ];
  assert.deepEqual(
    processesSeen(peers).map((p) => [p.pid, p.isTarget]),
    [
      [10, true],
      [11, true],
      [12, false],
    ],
  );
});

test('cluster workers sharing the driven port are targets, with their primary', () => {
  const peers = [
    peer(10, 1, [listen(10, 3000, { clusterPrimary: true })]),
    peer(11, 10, [listen(11, 3000)]),
    peer(12, 10, [listen(12, 3000)]),
  ];
  assert.deepEqual(
    processesSeen(peers, 3000).map((p) => p.isTarget),
    [true, true, true],
  );
});

test('the other-ports warning says which process opened a port when it is not the driven one', () => {
  // A helper the app forked opened its server first; the app's own server took the load.
  const peers = [peer(10, 1, [listen(10, 3000)]), peer(11, 10, [listen(11, 4000, { t: -5 })])];
  const others = otherPorts(peers, 3000);
  assert.deepEqual(others, [4000]);
  const told = otherPortsWarning(others, { url: 'http://127.0.0.1:3000/', pid: 10, port: 3000 }, false, portOwners(peers));
  assert.equal(
    told,
    "the target also listened on port 4000; the load went to port 3000, the first HTTP server the app's own process opened (port 4000: process 11 of the target, such as a helper it started). Pass --port 4000 to drive that one",
  );
});

test('the other-ports warning keeps "the first HTTP server the app opened" when one process opened both', () => {
  const peers = [peer(10, 1, [listen(10, 3000), listen(10, 9090)])];
  const told = otherPortsWarning(otherPorts(peers, 3000), { url: 'http://127.0.0.1:3000/', pid: 10, port: 3000 }, false, portOwners(peers));
  assert.match(told ?? '', /the load went to port 3000, the first HTTP server the app opened\. Pass --port 9090/);
  assert.equal(
    otherPortsWarning([9090], { url: 'http://127.0.0.1:3000/', pid: 10, port: 3000 }, true, portOwners(peers)),
    undefined,
    '--port given: nothing to warn',
  );
});
