// The agent's connection to the CLI: messages held during a timer fire (hold/release) leave
// together, in order, after the release; afterWrites waits for them; a closed socket counts them dropped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { once } from 'node:events';
import { setImmediate as tick } from 'node:timers/promises';
import { AgentConnection } from '../../src/agent/connection.js';

/** A Unix socket standing in for the CLI: collects the lines of its one connection. */
async function reader(): Promise<{ path: string; lines: Record<string, unknown>[]; server: net.Server; chunks: () => number }> {
  const path = join(mkdtempSync(join(tmpdir(), 'hotpath-conn-')), 'cli.sock');
  const lines: Record<string, unknown>[] = [];
  let partial = '';
  let chunks = 0;
  const server = net.createServer((c) => {
    c.setEncoding('utf8');
    c.on('data', (d: string) => {
      chunks++;
      partial += d;
      let nl: number;
      while ((nl = partial.indexOf('\n')) !== -1) {
        lines.push(JSON.parse(partial.slice(0, nl)) as Record<string, unknown>);
        partial = partial.slice(nl + 1);
      }
    });
  });
  server.listen(path);
  await once(server, 'listening');
  return { path, lines, server, chunks: () => chunks };
}

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

test('messages sent while held leave in order at the release, and nothing before it', async () => {
  const cli = await reader();
  const conn = new AgentConnection(cli.path, 0);
  try {
    conn.send({ type: 'agent-error', what: 'first', message: 'before the hold' });
    await until(() => cli.lines.length === 1);
    conn.hold();
    for (const what of ['a', 'b', 'c']) assert.equal(conn.send({ type: 'agent-error', what, message: 'held' }), true);
    let written = false;
    conn.afterWrites(() => {
      written = true;
    });
    await tick();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(cli.lines.length, 1, 'nothing held left before the release');
    assert.equal(written, false, 'afterWrites waits for the held messages');
    conn.release();
    await until(() => cli.lines.length === 4 && written);
    assert.deepEqual(
      cli.lines.map((l) => l.what),
      ['first', 'a', 'b', 'c'],
    );
    // A release with nothing held writes nothing (no empty line reaches the CLI).
    conn.hold();
    conn.release();
    conn.send({ type: 'agent-error', what: 'last', message: 'after' });
    await until(() => cli.lines.length === 5);
    assert.equal(cli.lines[4].what, 'last');
    assert.equal(conn.dropped, 0);
  } finally {
    conn.end();
    cli.server.close();
  }
});

test('held messages are counted as dropped when the connection closed before the release', async () => {
  const cli = await reader();
  const conn = new AgentConnection(cli.path, 0);
  await tick();
  conn.hold();
  conn.send({ type: 'agent-error', what: 'a', message: 'held' });
  conn.send({ type: 'agent-error', what: 'b', message: 'held' });
  let done = false;
  conn.afterWrites(() => {
    done = true;
  });
  conn.end();
  conn.release();
  assert.equal(conn.dropped, 2);
  assert.equal(done, true, 'afterWrites still called');
  cli.server.close();
});
