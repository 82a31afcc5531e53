// polka, connect, Express 4 and 5 in real processes: a middleware registered per request after
// listen is counted at the app's line that adds it (handler growth), and a request a
// middleware leaves unanswered names that middleware (the last function the router handed it
// to, hooks/last-handler.ts) and its route by URL shape, once its connection closes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentMessage, GrowthMessage, SampleMessage } from '../../../src/agent/protocol.js';
import { abandon, getMany, FIXTURES, agentLauncher } from '../helpers/agent-harness.js';

const startWith = agentLauncher();

function markerLine(name: string): number {
  return (
    readFileSync(join(FIXTURES, 'stack-routers.cjs'), 'utf8')
      .split('\n')
      .findIndex((l) => l.includes(`@site:${name}`)) + 1
  );
}

const frameworks = [
  { module: 'polka', framework: 'polka' },
  { module: 'connect', framework: 'connect' },
  { module: 'express4', framework: 'express' },
  { module: 'express417', framework: 'express' },
  { module: 'express', framework: 'express' },
];

for (const fw of frameworks) {
  test(`${fw.module}: middleware added per request after listen is counted at its site`, async () => {
    const { c, port } = await startWith(['stack-routers.cjs', fw.module]);
    // The first request makes polka known to the agent (its first route lookup).
    await getMany(port, '/register', 7, 1);
    const g = await c.waitFor(
      (m: AgentMessage): m is GrowthMessage => m.type === 'growth' && m.routes.some((r) => r.path === '/extra' && r.count >= 6),
      10_000,
      'routes',
    );
    const route = g.routes.find((r) => r.path === '/extra')!;
    assert.equal(route.framework, fw.framework);
    assert.equal(route.method, 'USE');
    assert.equal(route.site?.line, markerLine('use'));
    assert.equal(route.site?.function, 'register');
    assert.ok((route.stackSize ?? 0) >= 6, `stack size ${String(route.stackSize)}`);
    assert.deepEqual(c.of('agent-error'), []);
  });

  test(`${fw.module}: requests a middleware leaves unanswered name it and their URL shape`, async () => {
    const { c, port } = await startWith(['stack-routers.cjs', fw.module]);
    await getMany(port, '/ok', 4, 2);
    await Promise.all([abandon(port, '/hang/17', 300), abandon(port, '/hang/2048?x=1', 300), abandon(port, '/hang/5', 300)]);
    const s = await c.waitFor(
      (m: AgentMessage): m is SampleMessage => m.type === 'sample' && (m.unanswered?.[0]?.count ?? 0) >= 3,
      10_000,
      'unanswered requests',
    );
    const [entry] = s.unanswered!;
    assert.equal(entry.method, 'GET');
    assert.equal(entry.route, '/hang/:id');
    assert.equal(entry.handler?.name, 'requireKey');
    assert.equal(entry.handler?.line, markerLine('hang') - 1);
    assert.notEqual(entry.listener, true);
  });

  test(`${fw.module}: requests a handler leaves waiting before it touches them name it`, async () => {
    const { c, port } = await startWith(['stack-routers.cjs', fw.module]);
    await Promise.all([abandon(port, '/wait/17', 300), abandon(port, '/wait/5', 300)]);
    const s = await c.waitFor(
      (m: AgentMessage): m is SampleMessage => m.type === 'sample' && (m.unanswered?.[0]?.count ?? 0) >= 2,
      10_000,
      'unanswered requests',
    );
    const [entry] = s.unanswered!;
    assert.equal(entry.route, '/wait/:id');
    assert.equal(entry.handler?.name, 'awaitFirst');
    assert.equal(entry.handler?.line, markerLine('wait') - 1);
  });
}
