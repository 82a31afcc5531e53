import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asyncStorageGrowth } from '../../src/analyze/async-storage-growth.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

const middleware = { function: 'requestContext', file: '/srv/app/lib/context.js', line: 10, column: 17 };
const tracer = { function: 'startSpan', file: '/srv/app/node_modules/tracer/index.js', line: 40, column: 5 };

/** A run at `rps` whose growth reports carry `perRequest` AsyncLocalStorage instances per request so far (after listen). */
function withStorages(rps: number, perRequest: number, stack = [middleware], seed = 1, noise = 0, nodeVersion?: string) {
  const run = syntheticRun({ seed, noise, rps });
  const start = run.loadWindow!.start;
  for (const thread of run.threads) {
    for (const m of thread.growth) {
      const enabled = Math.max(0, Math.round(((m.t - start) / 1000) * rps * perRequest));
      m.asyncStorages = [{ enabled, site: stack[0], stack }];
    }
    if (nodeVersion) thread.hello = { ...(thread.hello ?? ({} as NonNullable<typeof thread.hello>)), nodeVersion, execArgv: [] };
  }
  return run;
}

for (const noise of NOISE_LEVELS) {
  test(`async storage growth: one AsyncLocalStorage enabled per request names where it is run (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const [f] = asyncStorageGrowth(withStorages(400, 1, [middleware], seed, noise));
      assert.equal(f?.category, 'handler-growth', `seed ${seed}`);
      assert.equal(f.culprit?.function, 'requestContext');
      assert.equal(f.severity, 'critical');
      assert.ok(Math.abs((f.evidence.perRequest as number) - 1) < 0.2, String(f.evidence.perRequest));
    }
  });
}

test('async storage growth: one storage for the process (enabled once) is no growth', () => {
  const run = syntheticRun({ seed: 1, rps: 400 });
  for (const m of run.threads[0].growth) m.asyncStorages = [{ enabled: 1, site: middleware, stack: [middleware] }];
  assert.deepEqual(asyncStorageGrowth(run), []);
});

test("async storage growth: a library's storages are the app caller's; on AsyncContextFrame (Node 24) an info", () => {
  const [f] = asyncStorageGrowth(withStorages(400, 1, [tracer, middleware]));
  assert.equal(f?.culprit?.function, 'requestContext');
  const [g] = asyncStorageGrowth(withStorages(400, 1, [middleware], 1, 0, 'v24.3.0'));
  assert.equal(g?.severity, 'info');
  assert.equal(g.evidence.walkedPerAsyncResource, false);
});
