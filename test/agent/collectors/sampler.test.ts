// The sampler's active-resource counts: read on every sample, except when there are so many
// (a timer leak) that listing them would cost the target on every sample.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpCollector } from '../../../src/agent/collectors/http-collector.js';
import { RESOURCES_MANY, RESOURCES_SLOW_EVERY, Sampler } from '../../../src/agent/collectors/sampler.js';

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
