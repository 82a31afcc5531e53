// io-wait on commands the app writes on its own client sockets (a database or cache driver on a
// long-lived connection), from synthetic socket-waits: the function that waits, the loop that
// serialises the waits when a request sends them one after another, and no such claim when they
// are sent together or batched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ioWait } from '../../src/analyze/io-wait.js';
import { protocolOf } from '../../src/analyze/signals/socket-waits.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';

function app(): {
  dir: string;
  stack: { function: string; file: string; line: number; column: number; functionLine?: number; functionColumn?: number }[];
} {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-sockets-'));
  writeFileSync(
    join(dir, 'stock.js'),
    [
      'async function stockFor(store, skus) {',
      '  const levels = {};',
      '  for (const sku of skus) {',
      '    levels[sku] = await store.get(`stock:${sku}`);',
      '  }',
      '  return levels;',
      '}',
    ].join('\n'),
  );
  const file = join(dir, 'store.js');
  const send = { function: '(anonymous)', file, line: 12, column: 14, functionLine: 10, functionColumn: 24 };
  const get = { function: 'get', file, line: 10, column: 12, functionLine: 9, functionColumn: 3 };
  const stockFor = { function: 'stockFor', file: join(dir, 'stock.js'), line: 4, column: 32, functionLine: 1, functionColumn: 1 };
  return { dir, stack: [send, get, stockFor] };
}

test('io-wait: commands sent one after another on a Redis connection name the loop that serialises them and the batching fix', () => {
  const { dir, stack } = app();
  // Ten 4 ms commands per request, one after another: 40 ms requests (12 in flight: 300 req/s).
  const run = syntheticRun({
    rps: 300,
    elu: 0.08,
    cores: 0.08,
    latencyMs: 40,
    inFlight: 12,
    resources: { TCPSocketWrap: 13 },
    cwd: dir,
    socketWaits: [{ remote: '10.0.0.5:6379', perRequest: 10, msEach: 4, site: stack[0], stack }],
  });
  const [f] = ioWait(run);
  assert.equal(f.category, 'io-wait');
  assert.equal(f.title, 'Requests spend their time waiting for Redis at 10.0.0.5:6379');
  assert.deepEqual(f.culprit, { function: 'stockFor', file: 'stock.js', line: 3 });
  assert.equal(f.evidence.sequential, true);
  assert.equal((f.evidence.waitsIn as { function: string }).function, 'get');
  const upstream = f.evidence.upstream as Record<string, unknown>;
  assert.equal(upstream.api, 'socket');
  assert.equal(upstream.protocol, 'Redis');
  assert.ok(Math.abs((upstream.callsPerRequest as number) - 10) < 0.5, String(upstream.callsPerRequest));
  assert.ok(Math.abs((upstream.perCallMs as number) - 4) < 0.1, String(upstream.perCallMs));
  assert.match(f.summary, /Commands written on the connection to Redis at 10\.0\.0\.5:6379 from get \(store\.js:10\) waited 4 ms each/);
  assert.match(f.summary, /awaited once per item by the loop at stock\.js:3 in stockFor \(the call on line 4\)/);
  assert.deepEqual(f.evidence.perItemCall, { function: 'stockFor', file: 'stock.js', line: 4, column: 32 });
  assert.match(f.recommendation, /MGET/);
  assert.match(f.recommendation, /WHERE id IN/);
  rmSync(dir, { recursive: true, force: true });
});

test('io-wait: the same commands sent together are the wait, not a serialising loop', () => {
  const { dir, stack } = app();
  // Ten 25 ms commands per request sent at once (Promise.all): 27 ms requests.
  const run = syntheticRun({
    rps: 440,
    elu: 0.08,
    cores: 0.08,
    latencyMs: 27,
    inFlight: 12,
    resources: { TCPSocketWrap: 13 },
    cwd: dir,
    socketWaits: [{ remote: '10.0.0.5:6379', perRequest: 10, msEach: 25, site: stack[0], stack }],
  });
  const [f] = ioWait(run);
  assert.equal(f.category, 'io-wait');
  assert.equal(f.culprit?.function, 'get', 'the function that waits');
  assert.equal(f.evidence.sequential, undefined);
  assert.equal(f.evidence.serialisedBy, undefined);
  assert.doesNotMatch(f.summary, /one after another/);
  assert.doesNotMatch(f.recommendation, /MGET/);
  // Two sent together: still twice the latency, above the commands' wider band.
  const two = syntheticRun({
    rps: 440,
    elu: 0.08,
    cores: 0.08,
    latencyMs: 27,
    inFlight: 12,
    resources: { TCPSocketWrap: 13 },
    cwd: dir,
    socketWaits: [{ remote: '10.0.0.5:6379', perRequest: 2, msEach: 25, site: stack[0], stack }],
  });
  assert.equal(ioWait(two)[0].evidence.sequential, undefined);
  rmSync(dir, { recursive: true, force: true });
});

test('io-wait: one batched command per request is the wait, with no serialising loop', () => {
  const { dir, stack } = app();
  const run = syntheticRun({
    rps: 400,
    elu: 0.05,
    cores: 0.05,
    latencyMs: 30,
    inFlight: 12,
    resources: { TCPSocketWrap: 13 },
    cwd: dir,
    socketWaits: [{ remote: '127.0.0.1:7400', perRequest: 1, msEach: 28, site: stack[0], stack }],
  });
  const [f] = ioWait(run);
  assert.equal(f.title, 'Requests spend their time waiting for 127.0.0.1:7400');
  assert.equal(f.culprit?.function, 'get');
  assert.equal(f.evidence.sequential, undefined);
  assert.equal((f.evidence.upstream as { protocol?: string }).protocol, undefined);
  rmSync(dir, { recursive: true, force: true });
});

test('io-wait: commands counted up to a report a second before the load ended are told per request of the whole window', () => {
  // Growth goes out once a second; stock-quote-one-chunk read 1.62 commands per request in a
  // 4 s load where each request sent two, its last socket report a second before the end.
  const { dir, stack } = app();
  const run = syntheticRun({
    rps: 400,
    durationS: 4,
    elu: 0.05,
    cores: 0.05,
    latencyMs: 30,
    inFlight: 12,
    resources: { TCPSocketWrap: 13 },
    cwd: dir,
    socketWaits: [{ remote: '10.0.0.5:6379', perRequest: 2, msEach: 14, site: stack[0], stack }],
  });
  const [thread] = run.threads;
  const last = thread.samples[thread.samples.length - 1].t;
  thread.growth = thread.growth.filter((g) => g.t <= last - 1000);
  const [f] = ioWait(run);
  const upstream = f.evidence.upstream as { callsPerRequest: number; shareOfRequestTime: number };
  assert.ok(Math.abs(upstream.callsPerRequest - 2) < 0.15, String(upstream.callsPerRequest));
  assert.ok(upstream.shareOfRequestTime > 0.8, String(upstream.shareOfRequestTime));
  rmSync(dir, { recursive: true, force: true });
});

test('io-wait: a slower HTTP call outweighs quick socket commands', () => {
  const { dir, stack } = app();
  const fetchSite = { function: 'quote', file: join(dir, 'quote.js'), line: 3, column: 9 };
  const run = syntheticRun({
    rps: 200,
    elu: 0.05,
    cores: 0.05,
    latencyMs: 60,
    inFlight: 12,
    resources: { TCPSocketWrap: 14 },
    cwd: dir,
    outgoing: [{ api: 'fetch', origin: 'http://pricing:8080', perRequest: 1, msEach: 55, site: fetchSite, stack: [fetchSite] }],
    socketWaits: [{ remote: '10.0.0.5:6379', perRequest: 1, msEach: 1, site: stack[0], stack }],
  });
  const [f] = ioWait(run);
  assert.equal(f.culprit?.function, 'quote');
  assert.equal((f.evidence.upstream as { api: string }).api, 'fetch');
  rmSync(dir, { recursive: true, force: true });
});

test('io-wait: the protocol a remote port suggests', () => {
  assert.equal(protocolOf('127.0.0.1:6379'), 'Redis');
  assert.equal(protocolOf('[::1]:5432'), 'Postgres');
  assert.equal(protocolOf('db:3306'), 'MySQL');
  assert.equal(protocolOf('127.0.0.1:41234'), undefined);
  assert.equal(protocolOf('/tmp/redis.sock'), undefined);
});
