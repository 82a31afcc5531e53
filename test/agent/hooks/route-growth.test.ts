// Route growth's framework probes in real processes: Express 4, whose `app.router` getter
// throws a deprecation, is probed without reading it (no agent error, nothing printed) and its
// routes registered after listen are still counted, whether Express 4 is found in require.cache
// (node_modules/express) or only through the server's request listener (an npm alias); and a
// framework stand-in whose router properties are throwing getters never has them called.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentMessage, GrowthMessage } from '../../../src/agent/protocol.js';
import { get, getMany, FIXTURES, ROOT, agentLauncher } from '../helpers/agent-harness.js';

const startWith = agentLauncher();

const growthWhere =
  (pred: (g: GrowthMessage) => boolean) =>
  (m: AgentMessage): m is GrowthMessage =>
    m.type === 'growth' && pred(m);

function markerLine(fixture: string, name: string): number {
  return (
    readFileSync(join(FIXTURES, fixture), 'utf8')
      .split('\n')
      .findIndex((l) => l.includes(`@site:${name}`)) + 1
  );
}

/** Express 4 as the npm aliases (`express4`, `express417`) and as a real node_modules/express 4 (NestJS 10's, in the compat fixtures). */
const express4Builds = [
  { name: 'the `express4` alias (found from the request listener)', module: 'express4', pathPart: '/node_modules/express4/' },
  // 4.17, the minor many lockfiles still hold: the same router internals must be found.
  { name: 'the `express417` alias, Express 4.17', module: 'express417', pathPart: '/node_modules/express417/' },
  {
    name: 'node_modules/express 4 (found in require.cache)',
    module: join(ROOT, 'test', 'fixtures', 'compat', 'nest10', 'node_modules', 'express'),
    pathPart: '/nest10/node_modules/express/',
  },
];

for (const build of express4Builds) {
  const installed = existsSync(
    join(build.module.startsWith('/') ? build.module : join(ROOT, 'node_modules', build.module), 'package.json'),
  );
  test(
    `Express 4 via ${build.name}: no agent error, no deprecation, routes after listen counted at their line`,
    { skip: !installed && `${build.module} is not installed` },
    async () => {
      const { c, t, port } = await startWith(['express4-routes.cjs', build.module]);
      await getMany(port, '/register', 6, 1);
      const g = await c.waitFor(
        growthWhere((m) => m.routes.some((r) => r.path === '/static' && r.count >= 6)),
        10_000,
        'routes',
      );
      const route = g.routes.find((r) => r.path === '/static')!;
      assert.equal(route.framework, 'express');
      assert.equal(route.method, 'GET');
      assert.equal(route.site?.line, markerLine('express4-routes.cjs', 'route'));
      assert.equal(route.site?.function, 'refreshRoutes');
      assert.ok(
        route.stack!.some((f) => f.file.includes(build.pathPart)),
        JSON.stringify(route.stack),
      );
      assert.deepEqual(c.of('agent-error'), []);
      assert.doesNotMatch(t.stderr(), /deprecated/);
    },
  );

  test(
    `Express 4 via ${build.name}: a param callback bound per request (app.param) is counted at its line`,
    { skip: !installed && `${build.module} is not installed` },
    async () => {
      const { c, port } = await startWith(['express4-routes.cjs', build.module]);
      await getMany(port, '/bind', 5, 1);
      const g = await c.waitFor(
        growthWhere((m) => m.routes.some((r) => r.method === 'PARAM' && r.count >= 5)),
        10_000,
        'param registrations',
      );
      const param = g.routes.find((r) => r.method === 'PARAM')!;
      assert.deepEqual([param.framework, param.path], ['express', ':id']);
      assert.equal(param.site?.line, markerLine('express4-routes.cjs', 'param'));
      assert.equal(param.site?.function, 'bindIdParam');
      assert.deepEqual(c.of('agent-error'), []);
    },
  );
}

test('a framework stand-in with throwing `router` getters: the probe never calls them', async () => {
  const { c, t, port } = await startWith(['getter-framework.cjs']);
  assert.equal((await get(port, '/getter-calls')).body, '0');
  // The agent keeps running: samples come after the listen.
  await c.waitFor((m) => m.type === 'sample', 10_000, 'a sample');
  assert.deepEqual(c.of('agent-error'), []);
  assert.doesNotMatch(t.stderr(), /deprecated/);
});
