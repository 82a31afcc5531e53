// Koa chains the agent cannot reach where Koa keeps its middleware, in real processes
// (fixture hung-koa-chains.cjs): an app mounted with koa-mount (composed once, when mounted,
// found through the composition's closure) has its middleware and router functions named when
// they leave a request waiting; and a middleware still pending after `await next()` (its
// downstream settled) is named, not the route handler that finished.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentMessage, SampleMessage, UnansweredRoute } from '../../../src/agent/protocol.js';
import { abandon, getMany, FIXTURES, agentLauncher } from '../helpers/agent-harness.js';

const startWith = agentLauncher();
const FIXTURE = 'hung-koa-chains.cjs';

/** The line of the `@site:<name>` marker. */
function markerLine(name: string): number {
  return (
    readFileSync(join(FIXTURES, FIXTURE), 'utf8')
      .split('\n')
      .findIndex((l) => l.includes(`@site:${name}`)) + 1
  );
}

async function unanswered(port: number, c: Awaited<ReturnType<typeof startWith>>['c'], path: string): Promise<UnansweredRoute> {
  await Promise.all([abandon(port, `${path}/17`, 300), abandon(port, `${path}/2048?x=1`, 300), abandon(port, `${path}/5`, 300)]);
  const s = await c.waitFor(
    (m: AgentMessage): m is SampleMessage =>
      m.type === 'sample' && (m.unanswered ?? []).some((e) => e.route.startsWith(path) && e.count >= 3),
    10_000,
    `unanswered requests on ${path}`,
  );
  return s.unanswered!.find((e) => e.route.startsWith(path))!;
}

test('koa-mount: a mounted app route handler that never settles is named, with the route under its mount path', async () => {
  const { c, port } = await startWith([FIXTURE, 'mount']);
  assert.deepEqual(new Set(await getMany(port, '/admin/ok/1', 6, 2)), new Set([200]));
  const entry = await unanswered(port, c, '/admin/hang');
  assert.equal(entry.route, '/admin/hang/:id');
  assert.equal(entry.handler?.name, 'showReport');
  assert.equal(entry.handler?.line, markerLine('hang') - 1);
  assert.deepEqual(new Set(await getMany(port, '/admin/ok/2', 4, 2)), new Set([200]));
  assert.deepEqual(c.of('agent-error'), []);
});

test("koa-mount: a mounted app's middleware that holds requests before its router is named", async () => {
  const { c, port } = await startWith([FIXTURE, 'mount']);
  await getMany(port, '/admin/ok/1', 4, 2);
  const entry = await unanswered(port, c, '/admin/held');
  assert.equal(entry.handler?.name, 'checkQuota');
  assert.equal(entry.handler?.line, markerLine('held') - 1);
  assert.deepEqual(new Set(await getMany(port, '/admin/ok/2', 4, 2)), new Set([200]));
});

test('a middleware still pending after await next() is named, not the handler that finished', async () => {
  const { c, port } = await startWith([FIXTURE, 'after']);
  assert.deepEqual(new Set(await getMany(port, '/ok/1', 6, 2)), new Set([200]));
  const entry = await unanswered(port, c, '/hang');
  assert.equal(entry.route, '/hang/:id');
  assert.equal(entry.handler?.name, 'storeInCache');
  assert.equal(entry.handler?.line, markerLine('after') - 2);
  assert.deepEqual(new Set(await getMany(port, '/ok/2', 4, 2)), new Set([200]));
  assert.deepEqual(c.of('agent-error'), []);
});
