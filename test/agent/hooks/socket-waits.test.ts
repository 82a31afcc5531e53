// Socket waits in a real process: a client holding one long-lived connection to a line-protocol
// store is timed per command, at the app line that wrote it, from the write to the answer; the
// store's own (accepted) sockets and node:http's client sockets are not the app's waits, and
// neither is a command written outside any request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentMessage, GrowthMessage, ListenMessage } from '../../../src/agent/protocol.js';
import { Collector, getMany, FIXTURES, agentLauncher } from '../helpers/agent-harness.js';

const startWith = agentLauncher();
const FIXTURE = 'socket-store.cjs';

const growthWhere =
  (pred: (g: GrowthMessage) => boolean) =>
  (m: AgentMessage): m is GrowthMessage =>
    m.type === 'growth' && pred(m);

function markerLine(name: string): number {
  const lines = readFileSync(join(FIXTURES, FIXTURE), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(`@site:${name}`));
  assert.ok(i >= 0, `marker ${name}`);
  return i + 1;
}

/** The fixture's app server: its third listen (after the store and the HTTP upstream). */
async function start(): Promise<{ c: Collector; port: number; store: number }> {
  const { c, port: store } = await startWith([FIXTURE]);
  const ports = new Set([store]);
  for (;;) {
    const l = await c.waitFor((m): m is ListenMessage => m.type === 'listen' && !ports.has(m.port!), 10_000, 'listen');
    ports.add(l.port!);
    if (ports.size === 3) return { c, port: l.port!, store };
  }
}

test('socket waits: commands written one after another are each timed from the write to the answer, at the writing line', async () => {
  const { c, port, store } = await start();
  await getMany(port, '/serial', 5, 1);
  const g = await c.waitFor(
    growthWhere((m) => (m.socketWaits ?? []).some((s) => s.completed >= 20)),
    10_000,
    'socket waits',
  );
  const waits = g.socketWaits!;
  assert.equal(waits.length, 1, JSON.stringify(waits));
  const w = waits[0];
  // Five requests, four commands each; the start-up command is not counted.
  assert.equal(w.count, 20);
  assert.equal(w.completed, 20);
  assert.equal(w.remote, `127.0.0.1:${store}`);
  // Each answer comes after the store's 10 ms timer: never less, and one at a time.
  assert.ok(w.totalMs >= 20 * 9.5, `${w.totalMs} ms`);
  assert.equal(w.concurrencyMs!.length, 2, `one write waiting at a time: ${JSON.stringify(w.concurrencyMs)}`);
  assert.ok(w.site?.file.endsWith(`/fixtures/agent/${FIXTURE}`), w.site?.file);
  assert.equal(w.site!.line, markerLine('write'));
  assert.equal(w.stack![1].function, 'get');
  // The stack goes on to the loop that awaited the command.
  assert.ok(
    w.stack!.some((f) => f.line === markerLine('loop')),
    JSON.stringify(w.stack),
  );
});

test('socket waits: commands written together wait together; the sockets of node:http and fetch are not counted', async () => {
  const { c, port } = await start();
  await getMany(port, '/together', 5, 1);
  await getMany(port, '/http', 3, 1);
  const g = await c.waitFor(
    growthWhere(
      (m) => (m.socketWaits ?? []).some((s) => s.completed >= 20) && (m.outgoing ?? []).filter((o) => o.completed >= 3).length >= 2,
    ),
    10_000,
    'socket waits and outgoing calls',
  );
  const waits = g.socketWaits!;
  assert.equal(waits.length, 1, JSON.stringify(waits));
  const w = waits[0];
  assert.equal(w.count, 20, 'http.get and fetch wrote on sockets too: not counted');
  assert.equal(w.completed, 20);
  // Four waiting at once, each answered once its own line came back.
  assert.ok(w.concurrencyMs!.length >= 4, JSON.stringify(w.concurrencyMs));
  assert.ok(w.totalMs >= 20 * 9.5, `${w.totalMs} ms`);
  assert.ok(
    w.stack!.some((f) => f.line === markerLine('together')),
    JSON.stringify(w.stack),
  );
});
