// Which peers serve the driven address (a cluster primary's shared handle does not), and how a
// served process that hotpath did not spawn ended, by its agent's last word.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PROTOCOL_VERSION, type ByeMessage, type ListenMessage } from '../../src/agent/protocol.js';
import type { AgentPeer } from '../../src/run/agent-server.js';
import { exitOf, servingPeers } from '../../src/run/served-end.js';

function listen(pid: number, where: { port?: number; pipe?: string }, clusterPrimary?: boolean): ListenMessage {
  return {
    v: PROTOCOL_VERSION,
    pid,
    threadId: 0,
    t: 0,
    type: 'listen',
    address: '127.0.0.1',
    ...where,
    ...(clusterPrimary ? { clusterPrimary } : {}),
  };
}

function peer(pid: number, listens: ListenMessage[], bye?: AgentPeer['bye'], threadId = 0): AgentPeer {
  return { pid, threadId, listens, profiles: [], closed: true, loop: [], ...(bye ? { bye } : {}) };
}

test("the peers that serve the driven port or socket; a cluster primary's shared handle is not one", () => {
  const primary = peer(1, [listen(1, { port: 8080 }, true)]);
  const worker = peer(2, [listen(2, { port: 8080 })]);
  const admin = peer(3, [listen(3, { port: 9090 })]);
  const unix = peer(4, [listen(4, { pipe: '/tmp/app.sock' })]);
  const peers = [primary, worker, admin, unix];
  assert.deepEqual(servingPeers(peers, { port: 8080 }), [worker]);
  assert.deepEqual(servingPeers(peers, { pipe: '/tmp/app.sock' }), [unix]);
});

test("a served process's exit code comes from its main thread's exit bye; none without one", () => {
  const base: Pick<ByeMessage, 'v' | 't' | 'type'> = { v: PROTOCOL_VERSION, t: 0, type: 'bye' };
  const peers = [
    peer(7, [], { ...base, pid: 7, threadId: 0, reason: 'flush' }), // its agent worker's connection
    peer(7, [listen(7, { port: 1 })], { ...base, pid: 7, threadId: 0, reason: 'exit', code: 3 }),
    peer(8, [listen(8, { port: 1 })]),
  ];
  assert.deepEqual(exitOf(peers, 7, 100), { code: 3, signal: null, at: 100 });
  assert.deepEqual(exitOf(peers, 8, 100), { code: null, signal: null, at: 100 }, 'killed by a signal: no exit handler ran');
});
