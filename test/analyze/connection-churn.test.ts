import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectionChurn } from '../../src/analyze/connection-churn.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

for (const noise of NOISE_LEVELS) {
  test(`churn: one connection per request without client keep-alive (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, connectionsPerRequest: 1, clientKeepalive: false, keepAliveTimeout: 1000 });
      const [f] = connectionChurn(run);
      assert.ok(f);
      assert.equal(f.category, 'connection-churn');
      assert.ok((f.evidence.connectionsPerRequest as number) > 0.9);
      assert.equal(f.evidence.keepAliveTimeoutMs, 1000);
      assert.match(f.recommendation, /keepAliveTimeout/);
      assert.match(f.recommendation, /proxy_http_version 1\.1/);
    }
  });

  test(`churn: keep-alive connections reused for thousands of requests stay quiet (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      assert.deepEqual(connectionChurn(syntheticRun({ seed, noise, connectionsPerRequest: 0.001 })), []);
    }
  });
}

test('churn: an open-model run whose connections idle longer than keepAliveTimeout', () => {
  const run = syntheticRun({ connectionsPerRequest: 0.01, keepAliveTimeout: 5000 });
  run.load!.model = 'open';
  run.load!.options.rate = 5; // 50 connections at 5 req/s: each idles 10 s between requests
  const [f] = connectionChurn(run);
  assert.equal(f.evidence.clientIdleMs, 10000);
  assert.match(f.summary, /shorter than/);
  // Not churning (yet): the advice is the timeout, not where else connections get closed.
  assert.match(f.recommendation, /^Set `server\.keepAliveTimeout` longer/);
  assert.doesNotMatch(f.recommendation, /closes connections after few requests/);
});
