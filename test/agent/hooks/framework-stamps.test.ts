// Fastify 4 and 5, Koa 2 and 3 (@koa/router, koa-mount), hapi, restify and Hono (@hono/node-server,
// also loaded as ES modules) in real processes: a request a route handler leaves waiting forever,
// or a hook or middleware stops before its route, names that function (the last one the framework
// called for it, hooks/framework-stamps.ts) and the route's pattern once its connection closes;
// the app still answers its other requests; and where the framework allows it after listen, a
// middleware or extension added per request is counted at the app's line that adds it (handler growth).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentMessage, GrowthMessage, SampleMessage, UnansweredRoute } from '../../../src/agent/protocol.js';
import { abandon, getMany, FIXTURES, agentLauncher } from '../helpers/agent-harness.js';

const startWith = agentLauncher();
const FIXTURE = 'hung-frameworks.cjs';

/** The line of the first `@site:<name>` marker (after the branch of `module`, when given). */
function markerLine(name: string, module?: string, fixture = FIXTURE): number {
  const lines = readFileSync(join(FIXTURES, fixture), 'utf8').split('\n');
  const from = module === undefined ? 0 : lines.findIndex((l) => l.includes(`fw === '${module}'`));
  return lines.findIndex((l, i) => i >= from && l.includes(`@site:${name}`)) + 1;
}

/**
 * Route patterns as each framework writes them, and what `checkQuota` is to it (`held`: a hook,
 * a middleware; undefined where the agent's stamps cannot tell, hapi's toolkit and restify's chains).
 */
const frameworks = [
  { module: 'fastify4', param: ':id', growth: undefined, held: 'hook' },
  { module: 'fastify', param: ':id', growth: undefined, held: 'hook' },
  { module: 'koa2', param: ':id', growth: { framework: 'koa', method: 'USE', path: '/' }, held: 'middleware' },
  { module: 'koa', param: ':id', growth: { framework: 'koa', method: 'USE', path: '/' }, held: 'middleware' },
  { module: 'hapi', param: '{id}', growth: { framework: 'hapi', method: 'EXT', path: 'onPostHandler' }, held: undefined },
  { module: 'restify', param: ':id', growth: { framework: 'restify', method: 'PRE', path: '/' }, held: undefined },
  { module: 'hono', param: ':id', growth: undefined, held: 'middleware' },
  // Hono and @hono/node-server imported as ES modules (found through the server's request listener),
  // and the same routes on their CommonJS builds (hono-routes.cjs holds the markers).
  { module: 'hono-esm', fixture: 'hung-hono.mjs', markers: 'hono-routes.cjs', param: ':id', growth: undefined, held: 'middleware' },
  { module: 'hono-cjs', fixture: 'hung-hono.cjs', markers: 'hono-routes.cjs', param: ':id', growth: undefined, held: 'middleware' },
];

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

for (const fw of frameworks) {
  test(`${fw.module}: requests a route handler leaves waiting name it and the route's pattern; the app still answers`, async () => {
    const { c, port } = await startWith(fw.fixture ? [fw.fixture] : [FIXTURE, fw.module]);
    const statuses = await getMany(port, '/ok/1', 6, 2);
    assert.deepEqual(new Set(statuses), new Set([200]));
    const entry = await unanswered(port, c, '/hang');
    assert.equal(entry.method, 'GET');
    assert.equal(entry.route, `/hang/${fw.param}`);
    assert.equal(entry.handler?.name, 'showReport');
    assert.equal(entry.handler?.line, markerLine('hang', undefined, fw.markers) - 1);
    assert.notEqual(entry.listener, true);
    // A route's handler, where the framework tells.
    assert.equal(entry.handlerKind, fw.held === undefined ? undefined : 'handler');
    // Still answering after the hung requests.
    assert.deepEqual(new Set(await getMany(port, '/ok/2', 4, 2)), new Set([200]));
    assert.deepEqual(c.of('agent-error'), []);
  });

  test(`${fw.module}: requests a hook or middleware holds before the route name it`, async () => {
    const { c, port } = await startWith(fw.fixture ? [fw.fixture] : [FIXTURE, fw.module]);
    await getMany(port, '/ok/1', 4, 2);
    const entry = await unanswered(port, c, '/held');
    assert.equal(entry.method, 'GET');
    assert.equal(entry.handler?.name, 'checkQuota');
    assert.equal(entry.handlerKind, fw.held);
    assert.equal(entry.handler?.line, fw.markers ? markerLine('held', undefined, fw.markers) - 1 : markerLine('held', fw.module) - 1);
    assert.ok(entry.route === `/held/${fw.param}` || entry.route === '/held/:id', entry.route);
    assert.deepEqual(new Set(await getMany(port, '/ok/2', 4, 2)), new Set([200]));
  });

  const growth = fw.growth;
  if (growth !== undefined) {
    test(`${fw.module}: ${growth.method.toLowerCase()} per request after listen is counted at its site`, async () => {
      const { c, port } = await startWith([FIXTURE, fw.module]);
      const statuses = await getMany(port, '/register', 7, 1);
      assert.deepEqual(new Set(statuses), new Set([200]));
      const g = await c.waitFor(
        (m: AgentMessage): m is GrowthMessage =>
          m.type === 'growth' && m.routes.some((r) => r.framework === growth.framework && r.path === growth.path && r.count >= 6),
        10_000,
        'routes',
      );
      const route = g.routes.find((r) => r.framework === growth.framework && r.path === growth.path)!;
      assert.equal(route.method, growth.method);
      assert.equal(route.site?.line, markerLine('use', fw.module));
      assert.equal(route.site?.function, 'register');
    });
  }
}

// Hono routes with no middleware (Hono then calls the handler itself, without its compose) and a
// middleware pending after `await next()`, on the ES module and the CommonJS builds.
for (const fixture of ['hung-hono.mjs', 'hung-hono.cjs']) {
  const MARKS = 'hono-routes.cjs';
  test(`${fixture}: a route without middleware whose handler read its request is named`, async () => {
    const { c, port } = await startWith([fixture]);
    await getMany(port, '/ok/1', 4, 2);
    const entry = await unanswered(port, c, '/single');
    assert.equal(entry.route, '/single/:id');
    assert.equal(entry.handler?.name, 'loadSingle');
    assert.equal(entry.handler?.line, markerLine('single', undefined, MARKS) - 2);
    assert.deepEqual(c.of('agent-error'), []);
  });

  test(`${fixture}: a route without middleware whose handler waits before it touches its context is named`, async () => {
    const { c, port } = await startWith([fixture]);
    // The first request of the app is the hung one: the app is caught at its first fetch.
    const entry = await unanswered(port, c, '/bare');
    assert.equal(entry.route, '/bare/:id');
    assert.equal(entry.handler?.name, 'waitFirst');
    assert.equal(entry.handler?.line, markerLine('bare', undefined, MARKS) - 1);
    assert.deepEqual(new Set(await getMany(port, '/ok/2', 4, 2)), new Set([200]));
    assert.deepEqual(c.of('agent-error'), []);
  });

  test(`${fixture}: a middleware still pending after await next() is named, not the handler that answered`, async () => {
    const { c, port } = await startWith([fixture]);
    await getMany(port, '/ok/1', 4, 2);
    const entry = await unanswered(port, c, '/after');
    assert.equal(entry.route, '/after/:id');
    assert.equal(entry.handler?.name, 'storeInCache');
    assert.equal(entry.handler?.line, markerLine('after', undefined, MARKS) - 2);
    assert.deepEqual(new Set(await getMany(port, '/ok/2', 4, 2)), new Set([200]));
    assert.deepEqual(c.of('agent-error'), []);
  });
}

// Koa chains the agent cannot reach where Koa keeps its middleware (hung-koa-chains.cjs): an app
// mounted with koa-mount (composed once, when mounted, found through the composition's closure),
// and a middleware still pending after `await next()` (its downstream settled).
const CHAINS = 'hung-koa-chains.cjs';

test('koa-mount: a mounted app route handler that never settles is named, with the route under its mount path', async () => {
  const { c, port } = await startWith([CHAINS, 'mount']);
  assert.deepEqual(new Set(await getMany(port, '/admin/ok/1', 6, 2)), new Set([200]));
  const entry = await unanswered(port, c, '/admin/hang');
  assert.equal(entry.route, '/admin/hang/:id');
  assert.equal(entry.handler?.name, 'showReport');
  assert.equal(entry.handler?.line, markerLine('hang', undefined, CHAINS) - 1);
  assert.deepEqual(new Set(await getMany(port, '/admin/ok/2', 4, 2)), new Set([200]));
  assert.deepEqual(c.of('agent-error'), []);
});

test("koa-mount: a mounted app's middleware that holds requests before its router is named", async () => {
  const { c, port } = await startWith([CHAINS, 'mount']);
  await getMany(port, '/admin/ok/1', 4, 2);
  const entry = await unanswered(port, c, '/admin/held');
  assert.equal(entry.route, '/admin/held/:id');
  assert.equal(entry.handler?.name, 'checkQuota');
  assert.equal(entry.handler?.line, markerLine('held', undefined, CHAINS) - 1);
  assert.deepEqual(new Set(await getMany(port, '/admin/ok/2', 4, 2)), new Set([200]));
});

test('koa: a middleware still pending after await next() is named, not the handler that finished', async () => {
  const { c, port } = await startWith([CHAINS, 'after']);
  assert.deepEqual(new Set(await getMany(port, '/ok/1', 6, 2)), new Set([200]));
  const entry = await unanswered(port, c, '/hang');
  assert.equal(entry.route, '/hang/:id');
  assert.equal(entry.handler?.name, 'storeInCache');
  assert.equal(entry.handler?.line, markerLine('after', undefined, CHAINS) - 2);
  assert.deepEqual(new Set(await getMany(port, '/ok/2', 4, 2)), new Set([200]));
  assert.deepEqual(c.of('agent-error'), []);
});
