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

test('churn: a timeout below the estimated idle time says nothing when no connection was cut', () => {
  // An open-model engine that reuses its first free connection: 50 connections asked for, the
  // estimate says each idles 10 s, but the server closed none and no client reconnected.
  const run = syntheticRun({ connectionsPerRequest: 0.0001, keepAliveTimeout: 5000 });
  run.load!.model = 'open';
  run.load!.options.rate = 5;
  run.load!.connections.closedByServer = 0;
  run.load!.connections.opened = 1;
  for (const t of run.threads) for (const s of t.samples) if (s.http) s.http.connections = 0;
  if (run.threads[0]?.samples[0]?.http) run.threads[0].samples[0].http.connections = 1;
  assert.deepEqual(connectionChurn(run), []);
});

test('churn: the app closing every connection with its own Connection: close header is named, with the line that sets it', () => {
  const site = { function: 'applyLegacyHeaders', file: '/app/lib/legacy-headers.js', line: 9, column: 7 };
  const run = syntheticRun({ cwd: '/app', connectionsPerRequest: 1, closeHeaderShare: 1, closeHeaderSite: site, keepAliveTimeout: 5000 });
  const [f] = connectionChurn(run);
  assert.equal(f.title, 'The app closes every connection (Connection: close)');
  assert.deepEqual(f.culprit, { function: 'applyLegacyHeaders', file: 'lib/legacy-headers.js', line: 9, column: 7 });
  assert.match(f.summary, /closed the connection after 100 % of the responses although the client asked to keep it/);
  assert.match(f.recommendation, /^Stop sending `Connection: close`/);
  assert.doesNotMatch(f.recommendation, /keepAliveTimeout` longer/, 'the timeout is not the cause');
  // The server closing without the app's header (maxRequestsPerSocket, a short timeout) keeps the general advice.
  const [g] = connectionChurn(syntheticRun({ cwd: '/app', connectionsPerRequest: 1, keepAliveTimeout: 5000 }));
  assert.equal(g.culprit, undefined);
  assert.match(g.recommendation, /Check for `Connection: close` responses/);
});

test('churn: a server that closes every kept-alive connection after 3 requests (maxRequestsPerSocket) is named with its setting', () => {
  const run = syntheticRun({ connectionsPerRequest: 0.33, keepAliveTimeout: 1 });
  run.threads[0].listens[0].server!.maxRequestsPerSocket = 3;
  run.load!.connections.closedByServer = run.load!.connections.opened - 5;
  const [f] = connectionChurn(run);
  assert.ok(f);
  assert.equal(f.category, 'connection-churn');
  assert.equal(f.title, 'The server closes keep-alive connections after a few requests');
  assert.match(f.summary, /`maxRequestsPerSocket` is 3/);
  assert.match(f.summary, /`keepAliveTimeout` is 1 ms/);
  assert.equal(f.evidence.maxRequestsPerSocket, 3);
  assert.match(f.recommendation, /maxRequestsPerSocket/);
});

test('churn: one new connection per 3 requests that the clients closed themselves (not the server) stays quiet', () => {
  const run = syntheticRun({ connectionsPerRequest: 0.33 });
  run.load!.connections.closedByServer = 0;
  assert.deepEqual(connectionChurn(run), []);
});

test('churn: a server closing what little the clients opened (one connection per 20 requests) stays quiet', () => {
  const run = syntheticRun({ connectionsPerRequest: 0.05 });
  run.load!.connections.closedByServer = run.load!.connections.opened;
  assert.deepEqual(connectionChurn(run), []);
});
