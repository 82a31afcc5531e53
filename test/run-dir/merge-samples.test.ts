// Per-second aggregates of telemetry samples (a long run's telemetry is read this way).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SampleMessage } from '../../src/agent/protocol.js';
import { mergeable, mergeSamples } from '../../src/run-dir/merge-samples.js';

const h = (count: number, mean: number, p99: number) => ({ count, min: mean / 2, mean, max: p99 * 2, p50: mean, p90: p99, p99 });
function sample(t: number, over: Partial<SampleMessage> = {}): SampleMessage {
  return {
    v: 1,
    pid: 1,
    threadId: 0,
    t,
    type: 'sample',
    intervalMs: 100,
    eld: h(10, 1, 2),
    elu: 0.5,
    cpu: { user: 1000, system: 100 },
    mem: { rss: t, heapUsed: t, heapTotal: 1, external: 1, arrayBuffers: 1 },
    resources: { Timeout: 1 },
    ...over,
  };
}

test('samples of one second merge into one: sums, weighted means, the larger tail, the later snapshot', () => {
  const a = sample(1_000_100, {
    elu: 0.2,
    http: {
      started: 3,
      finished: 3,
      active: 1,
      connections: 1,
      openConnections: 2,
      latency: h(3, 4, 8),
      statusCodes: { 200: 3 },
      reused: 2,
      closed: 1,
      requestsPerClosedConnection: 2,
    },
  });
  const b = sample(1_000_200, {
    intervalMs: 300,
    elu: 0.6,
    eld: h(30, 3, 1),
    gc: { observedMs: 50, full: 1 },
    http: {
      started: 5,
      finished: 4,
      active: 2,
      connections: 0,
      openConnections: 3,
      latency: h(4, 2, 20),
      statusCodes: { 200: 3, 500: 1 },
      reused: 4,
      closed: 0,
      requestsPerClosedConnection: 0,
    },
  });
  assert.ok(mergeable(a, b));
  const m = mergeSamples(a, b);
  assert.equal(m.t, b.t);
  assert.equal(m.intervalMs, 400);
  assert.equal(m.elu, (0.2 * 100 + 0.6 * 300) / 400);
  assert.deepEqual(m.cpu, { user: 2000, system: 200 });
  assert.equal(m.eld.count, 40);
  assert.equal(m.eld.mean, (1 * 10 + 3 * 30) / 40);
  assert.equal(m.eld.p99, 2, 'the larger p99');
  assert.equal(m.mem.rss, b.mem.rss, 'memory is a snapshot: the later one');
  assert.deepEqual(m.gc, { observedMs: 50, full: 1 });
  assert.equal(m.http?.started, 8);
  assert.equal(m.http?.active, 2);
  assert.deepEqual(m.http?.statusCodes, { 200: 6, 500: 1 });
  assert.equal(m.http?.latency.p99, 20);
  assert.equal(m.http?.requestsPerClosedConnection, 2);
});

test('samples of different seconds, and the post-load GC sample, are not merged', () => {
  assert.ok(!mergeable(sample(1_000_900), sample(1_001_000)));
  assert.ok(!mergeable(sample(1_000_100), sample(1_000_200, { postLoadGc: { gcMs: 5, heapAfter: 1 } })));
});
