// Which peers serve the driven address (a cluster primary's shared handle does not), and how a
// served process that hotpath did not spawn ended, by its agent's last word.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentServer } from '../../src/run/agent-server.js';
import { PROTOCOL_VERSION, type ByeMessage, type ListenMessage } from '../../src/agent/protocol.js';
import type { AgentPeer } from '../../src/run/agent-server.js';
import { exitOf, servingPeers, watchServedEnd, type ServedEnd } from '../../src/run/served-end.js';

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

/** A pid no process has (above the kernel's pid_max default). */
const GONE_PID = 4_194_999;

async function agent(server: AgentServer, pid: number, listen: Partial<ListenMessage>): Promise<Socket> {
  const s = connect(server.path);
  await once(s, 'connect');
  const line = (m: object) => JSON.stringify({ v: PROTOCOL_VERSION, pid, threadId: 0, t: Date.now(), ...m });
  s.write(
    `${line({ type: 'hello', ppid: 1, argv: ['node', 'cluster.js'], execArgv: [], cwd: '/', nodeVersion: process.version, isMainThread: true })}\n`,
  );
  s.write(`${line({ type: 'listen', address: '127.0.0.1', ...listen })}\n`);
  await new Promise((r) => setTimeout(r, 30));
  return s;
}

test('a cluster worker that ends while the primary holds the port: the run waits for the next worker to listen; without one it ends', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-served-end-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const server = await AgentServer.start(join(dir, 'telemetry.ndjson'));
  t.after(() => server.close());
  const ends: ServedEnd[] = [];
  const primary = await agent(server, process.pid, { port: 8080, clusterPrimary: true });
  const first = await agent(server, GONE_PID, { port: 8080 });
  const stop = watchServedEnd(server, { port: 8080 }, process.pid + 1, (e) => ends.push(e));
  t.after(stop);
  first.destroy();
  // The next worker listens 100 ms after the first one's end (forked late, or a replacement).
  await new Promise((r) => setTimeout(r, 100));
  const second = await agent(server, GONE_PID - 1, { port: 8080 });
  await new Promise((r) => setTimeout(r, 1200));
  assert.equal(ends.length, 0, 'the primary handed the port to the next worker: the run goes on');
  // That one ends too and none follows: after the wait, the run ends with it.
  second.destroy();
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(ends.length, 1);
  assert.equal(ends[0].pid, GONE_PID - 1);
  primary.destroy();
});
