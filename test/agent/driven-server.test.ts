// Which servers of a thread are not driven, on real servers listening on 127.0.0.1 and on a
// Unix socket: none before the CLI names one, every server listening elsewhere after, also
// those that listen later; a server handed connections without listening is never marked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DrivenServer, OTHER_SERVER, type MarkedServer } from '../../src/agent/driven-server.js';

function listening(server: net.Server, where: number | string = 0): Promise<MarkedServer> {
  return new Promise((resolve) => {
    if (typeof where === 'string') server.listen(where, () => resolve(server));
    else server.listen(where, '127.0.0.1', () => resolve(server));
  });
}

const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;
const close = (...servers: net.Server[]) => Promise.all(servers.map((s) => new Promise((r) => s.close(r))));

test('no server is marked before the CLI names the driven one; after, every server listening elsewhere is', async () => {
  const driven = new DrivenServer();
  const main = await listening(http.createServer());
  const config = await listening(http.createServer());
  try {
    driven.onListen(main);
    driven.onListen(config);
    assert.equal(driven.known, false);
    assert.equal(main[OTHER_SERVER], undefined);
    assert.equal(config[OTHER_SERVER], undefined);
    driven.setTarget({ port: portOf(main) });
    assert.equal(driven.known, true);
    assert.equal(main[OTHER_SERVER], undefined, 'the driven server is left as it was');
    assert.equal(config[OTHER_SERVER], true);
    // A server that listens after the target is known is marked at its listen.
    const metrics = await listening(http.createServer());
    driven.onListen(metrics);
    assert.equal(metrics[OTHER_SERVER], true);
    await close(metrics);
  } finally {
    await close(main, config);
  }
});

test('a Unix socket target: servers on TCP ports are the others; a server that never listens is never marked', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-driven-'));
  const path = join(dir, 'app.sock');
  const driven = new DrivenServer();
  const main = await listening(http.createServer(), path);
  const admin = await listening(http.createServer());
  // An HTTP server handed the connections of a plain TCP server (it never listens itself).
  const handedTo: MarkedServer = http.createServer();
  try {
    driven.onListen(main);
    driven.onListen(admin);
    driven.setTarget({ pipe: path });
    assert.equal(main[OTHER_SERVER], undefined);
    assert.equal(admin[OTHER_SERVER], true);
    assert.equal(handedTo[OTHER_SERVER], undefined);
  } finally {
    await close(main, admin);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a target message without a port or path, or with values of the wrong type, changes nothing', async () => {
  const driven = new DrivenServer();
  const server = await listening(http.createServer());
  try {
    driven.onListen(server);
    driven.setTarget({});
    driven.setTarget({ port: '3000' as unknown as number });
    assert.equal(driven.known, false);
    assert.equal(server[OTHER_SERVER], undefined);
  } finally {
    await close(server);
  }
});
