// The agent's plain-JS latency histogram against exact percentiles of the same data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LogHistogram } from '../../../src/agent/collectors/log-histogram.js';
import { summarize } from '../../../src/agent/collectors/histogram-summary.js';

function exact(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

test('values below 128 are exact; count, min, max and mean are exact', () => {
  const h = new LogHistogram();
  for (let v = 1; v <= 100; v++) h.record(v);
  assert.equal(h.count, 100);
  assert.equal(h.min, 1);
  assert.equal(h.max, 100);
  assert.equal(h.mean, 50.5);
  assert.equal(h.percentile(50), 50);
  assert.equal(h.percentile(99), 99);
  assert.equal(h.percentile(100), 100);
});

test('percentiles of a long-tailed latency sample are within 1/64 above the exact value', () => {
  let seed = 7;
  const rand = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const values = Array.from({ length: 50_000 }, () =>
    Math.max(1, Math.round(200 * Math.exp(3 * rand()) + (rand() < 0.01 ? 2e6 * rand() : 0))),
  );
  const h = new LogHistogram();
  for (const v of values) h.record(v);
  const sorted = [...values].sort((a, b) => a - b);
  for (const p of [1, 10, 50, 75, 90, 99, 99.9]) {
    const want = exact(sorted, p);
    const got = h.percentile(p);
    assert.ok(got >= want && got <= want * (1 + 1 / 64) + 1, `p${p}: ${got} vs exact ${want}`);
  }
  assert.equal(h.max, sorted[sorted.length - 1]);
});

test('out-of-range values are clamped, reset empties it, and summarize reads it like a perf_hooks histogram', () => {
  const h = new LogHistogram();
  assert.deepEqual(summarize(h, 1e-3), { count: 0, min: 0, mean: 0, max: 0, p50: 0, p90: 0, p99: 0 });
  h.record(0);
  h.record(-5);
  h.record(2 ** 40);
  assert.equal(h.min, 0);
  assert.equal(h.percentile(50), 0);
  assert.equal(h.max, 2 ** 31 - 1);
  h.reset();
  assert.equal(h.count, 0);
  h.record(1500);
  h.record(2500);
  const s = summarize(h, 1e-3);
  assert.equal(s.count, 2);
  assert.equal(s.min, 1.5);
  assert.equal(s.max, 2.5);
  assert.equal(s.mean, 2);
  assert.ok(s.p99 >= 2.5 && s.p99 <= 2.5 * (1 + 1 / 64));
});

test('a reset after large values leaves no trace: small values read exactly again', () => {
  const h = new LogHistogram();
  for (let i = 0; i < 100; i++) h.record(5_000_000 + i);
  h.reset();
  for (const v of [3, 4, 5]) h.record(v);
  assert.deepEqual([h.count, h.min, h.max, h.percentile(50), h.percentile(99), h.percentile(100)], [3, 3, 5, 4, 5, 5]);
});
