import { test } from 'node:test';
import assert from 'node:assert/strict';
import { handlerGrowth } from '../../src/analyze/handler-growth.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

const site = { function: 'refreshRoutes', file: '/srv/app/routes.js', line: 8, column: 7 };

for (const noise of NOISE_LEVELS) {
  test(`handler growth: a route re-registered every 150 ms, with latency creeping (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({
        seed,
        noise,
        latencyMs: (p) => 1 + 4 * p,
        routeGrowth: [{ framework: 'express', method: 'GET', path: '/static', perSecond: 6.6, site }],
      });
      const [f] = handlerGrowth(run);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.category, 'handler-growth');
      assert.equal(f.severity, 'critical');
      assert.deepEqual([f.culprit?.function, f.culprit?.file], ['refreshRoutes', 'routes.js']);
      assert.ok((f.evidence.registrations as number) >= 60);
      assert.ok((f.evidence.routerStackSize as number) > 60);
    }
  });

  test(`handler growth: routes registered once (or twice, lazily) are fine (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({
        seed,
        noise,
        routeGrowth: [{ framework: 'express', method: 'GET', path: '/lazy', perSecond: 0.2, site }],
      });
      assert.deepEqual(handlerGrowth(run), []);
    }
  });
}

test('handler growth: twenty different routes registered once each after listen (async startup) are not growth', () => {
  const site = { function: 'registerRoutes', file: '/srv/app/routes.js', line: 3, column: 5 };
  const run = syntheticRun({});
  const routes = Array.from({ length: 20 }, (_, i) => ({
    framework: 'express',
    method: 'GET',
    path: `/r${i}`,
    count: 1,
    site,
    stackSize: 25,
  }));
  for (const m of run.threads[0].growth) m.routes = routes;
  assert.deepEqual(handlerGrowth(run), []);
});

test("handler growth: Koa middleware added per request is named as Koa's middleware stack", () => {
  const site = { function: 'addAuditMiddleware', file: '/srv/app/audit.js', line: 4, column: 7 };
  const run = syntheticRun({ seed: 1, routeGrowth: [{ framework: 'koa', method: 'USE', path: '/', perSecond: 50, site }] });
  const [f] = handlerGrowth(run);
  assert.ok(f);
  assert.equal(f.title, 'Middleware on / is registered again and again after listen');
  assert.match(f.summary, /^koa middleware on \/ was registered \d+ times after the server started listening/);
  // Latency flat: Koa composed its chain at listen, so the copies only pile up and never run.
  assert.match(
    f.summary,
    /latency did not creep: Koa composed its middleware when the server was made \(app\.callback\(\)\), so the copies pile up in app\.middleware \(memory\) and the middleware added late never runs\. Koa's middleware stack \(app\.middleware\) now holds \d+ functions\./,
  );
  assert.match(f.recommendation, /before `app\.listen\(\)`/);
  assert.deepEqual([f.culprit?.function, f.culprit?.file], ['addAuditMiddleware', 'audit.js']);
  // An app that builds a new callback per request runs every copy: latency creeps.
  const creeping = syntheticRun({
    seed: 1,
    latencyMs: (p) => 2 + 20 * p,
    routeGrowth: [{ framework: 'koa', method: 'USE', path: '/', perSecond: 50, site }],
  });
  assert.match(handlerGrowth(creeping)[0].summary, /each copy stays in app\.middleware and runs on every request that gets that far/);
});

test('handler growth: a hapi extension added per request names the function that adds it and the registrations per request', () => {
  const site = { function: 'ensureCors', file: '/srv/app/lib/cors.js', line: 12, column: 10 };
  const run = syntheticRun({
    seed: 1,
    rps: 200,
    routeGrowth: [{ framework: 'hapi', method: 'EXT', path: 'onPreResponse', perSecond: 200, site }],
  });
  const [f] = handlerGrowth(run);
  assert.ok(f);
  assert.equal(f.title, 'Extension onPreResponse is registered again and again after listen');
  assert.match(
    f.summary,
    /^hapi extension onPreResponse was registered \d+ times after the server started listening \(\d+(\.\d)? per second, [\d.]+ per request\)/,
  );
  assert.match(f.summary, /hapi adds each to the lifecycle of every route/);
  const perRequest = f.evidence.perRequest as number;
  assert.ok(perRequest > 0.8 && perRequest < 1.2, `perRequest ${perRequest}`);
  assert.deepEqual([f.culprit?.function, f.culprit?.file], ['ensureCors', 'lib/cors.js']);
});

test('handler growth: an Express param callback bound per request is named as a param handler, with no router stack claimed', () => {
  const site = { function: 'bindAccountParam', file: '/srv/app/accounts.js', line: 4, column: 10 };
  const run = syntheticRun({ seed: 2, routeGrowth: [{ framework: 'express', method: 'PARAM', path: ':account', perSecond: 40, site }] });
  const [f] = handlerGrowth(run);
  assert.ok(f);
  assert.equal(f.category, 'handler-growth');
  assert.equal(f.title, 'Param handler for :account is registered again and again after listen');
  assert.match(f.summary, /each request whose route has that param/);
  assert.doesNotMatch(f.summary, /router stack now holds/);
  assert.equal(f.culprit?.function, 'bindAccountParam');
});
