import { test } from 'node:test';
import assert from 'node:assert/strict';
import { handleLeak } from '../../src/analyze/handle-leak.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

const checkStock = { function: 'checkStock', file: '/srv/app/lib/stock.mjs', line: 4, column: 21 };
const audit = { function: 'audit', file: '/srv/app/lib/audit.mjs', line: 9, column: 3 };

// Sockets fetch's client connects from its own dispatcher (no app frame), one per 4 requests kept open.
const leak = { api: 'net.connect', resource: 'TCPSocketWrap', perRequest: 1, openShare: 0.25, unrefShare: 0.7 };

for (const noise of NOISE_LEVELS) {
  test(`handle leak: sockets an HTTP client connected with no app frame are charged to the app's call site (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const [f] = handleLeak(
        syntheticRun({
          seed,
          noise,
          rps: 300,
          handleGrowth: [leak],
          outgoing: [{ api: 'fetch', origin: 'http://127.0.0.1:7000', perRequest: 1, msEach: 4, site: checkStock }],
        }),
      );
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.culprit?.function, 'checkStock');
      assert.deepEqual(f.evidence.connectedFor, {
        api: 'fetch',
        origin: 'http://127.0.0.1:7000',
        calls: (f.evidence.connectedFor as { calls: number }).calls,
      });
      assert.match(f.summary, /connected by the HTTP client for the fetch calls to http:\/\/127\.0\.0\.1:7000 that `checkStock` makes/);
      assert.match(f.recommendation, /read or cancel every response body/);
    }
  });
}

test('handle leak: no client site is named when the calls are spread over sites or fewer than the sockets kept', () => {
  const spread = handleLeak(
    syntheticRun({
      rps: 300,
      handleGrowth: [leak],
      outgoing: [
        { api: 'fetch', origin: 'http://127.0.0.1:7000', perRequest: 1, msEach: 4, site: checkStock },
        { api: 'http', origin: 'http://127.0.0.1:7001', perRequest: 1, msEach: 4, site: audit },
      ],
    }),
  )[0];
  assert.ok(spread);
  assert.equal(spread.culprit, undefined);
  assert.equal(spread.evidence.connectedFor, undefined);
  const few = handleLeak(
    syntheticRun({
      rps: 300,
      handleGrowth: [leak],
      outgoing: [{ api: 'fetch', origin: 'http://127.0.0.1:7000', perRequest: 0.1, msEach: 4, site: checkStock }],
    }),
  )[0];
  assert.ok(few);
  assert.equal(few.culprit, undefined);
});
