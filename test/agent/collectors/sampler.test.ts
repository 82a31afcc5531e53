// The sampler's active-resource counts: read on every sample, except when there are so many
// (a timer leak) that listing them would cost the target on every sample. Its memory: the RSS
// (a /proc read) about once a second, the heap from V8's counters at every sample.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpCollector } from '../../../src/agent/collectors/http-collector.js';
import { MemoryReader, RESOURCES_MANY, RESOURCES_SLOW_EVERY, RSS_EVERY_MS, Sampler } from '../../../src/agent/collectors/sampler.js';

function countingListings<T>(fn: () => T): { result: T; calls: number } {
  const proc = process as unknown as { getActiveResourcesInfo: () => string[] };
  const original = proc.getActiveResourcesInfo;
  let calls = 0;
  proc.getActiveResourcesInfo = function (this: unknown) {
    calls++;
    return original.call(process);
  };
  try {
    return { result: fn(), calls };
  } finally {
    proc.getActiveResourcesInfo = original;
  }
}

test('resources are listed on every sample; with very many, once every few samples and repeated between', () => {
  const sampler = new Sampler(new HttpCollector(), 100);
  try {
    const few = countingListings(() => Array.from({ length: 5 }, () => sampler.take(0)));
    assert.equal(few.calls, 5);
    const timers = Array.from({ length: RESOURCES_MANY + 500 }, () => setTimeout(() => {}, 60_000));
    try {
      const many = countingListings(() => Array.from({ length: 2 * RESOURCES_SLOW_EVERY }, () => sampler.take(0)));
      assert.equal(many.calls, 2, `${many.calls} listings for ${2 * RESOURCES_SLOW_EVERY} samples`);
      for (const s of many.result) assert.ok((s.resources.Timeout ?? 0) >= RESOURCES_MANY, JSON.stringify(s.resources));
    } finally {
      for (const t of timers) clearTimeout(t);
    }
    // Back to few: the next listing sees it, and listing on every sample resumes.
    const after = countingListings(() => Array.from({ length: 2 * RESOURCES_SLOW_EVERY }, () => sampler.take(0)));
    assert.ok(after.calls >= RESOURCES_SLOW_EVERY + 1, `${after.calls}`);
    assert.ok((after.result.at(-1)!.resources.Timeout ?? 0) < RESOURCES_MANY);
  } finally {
    sampler.stop();
  }
});

function countingMemoryUsage<T>(fn: () => T): { result: T; calls: number } {
  const original = process.memoryUsage;
  let calls = 0;
  const counted = Object.assign(
    function (this: unknown) {
      calls++;
      return original.call(process);
    },
    { rss: original.rss },
  );
  process.memoryUsage = counted as typeof process.memoryUsage;
  try {
    return { result: fn(), calls };
  } finally {
    process.memoryUsage = original;
  }
}

test('memory: the full reading (RSS) once every n samples, the heap at each; a fresh reading on demand', () => {
  const reader = new MemoryReader(5);
  const held: number[][] = [];
  const { result, calls } = countingMemoryUsage(() =>
    Array.from({ length: 10 }, (_, i) => {
      if (i === 2) held.push(Array.from({ length: 200_000 }, (_, k) => k)); // the heap grows between two full readings
      return reader.read();
    }),
  );
  assert.equal(calls, 2, `${calls} full readings for 10 samples`);
  // Between full readings RSS and ArrayBuffers repeat; the heap is read anew.
  assert.equal(result[1].rss, result[0].rss);
  assert.equal(result[4].arrayBuffers, result[0].arrayBuffers);
  assert.ok(result[2].heapUsed > result[1].heapUsed + 1_000_000, `${result[1].heapUsed} -> ${result[2].heapUsed}`);
  for (const m of result) assert.ok(m.rss > 0 && m.heapUsed > 0 && m.heapTotal >= m.heapUsed && m.external >= 0, JSON.stringify(m));
  assert.equal(countingMemoryUsage(() => reader.read(true)).calls, 1, 'fresh: a full reading whatever the count');
  assert.equal(held.length, 1);
});

test('the sampler reads the RSS about once every RSS_EVERY_MS of samples', () => {
  const sampler = new Sampler(new HttpCollector(), 100);
  try {
    const n = (2 * RSS_EVERY_MS) / 100;
    const { calls } = countingMemoryUsage(() => Array.from({ length: n }, () => sampler.take(0)));
    assert.equal(calls, 2, `${calls} full readings for ${n} samples`);
    assert.equal(countingMemoryUsage(() => sampler.take(0, true)).calls, 1);
  } finally {
    sampler.stop();
  }
});
