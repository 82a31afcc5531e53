// The CPU profile's default interval depends on the load (src/run/cpu-interval.ts): 1,000 samples
// of a busy loop over a load of known duration, 1-10 ms; 1 ms when the load has no known end.
// --cpu-interval always wins, and the interval chosen reaches the run's options (meta.json).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CPU_INTERVAL_MAX_US, CPU_INTERVAL_MIN_US, CPU_SAMPLES_WANTED, defaultCpuIntervalUs } from '../../src/run/cpu-interval.js';
import { resolveRunOptions } from '../../src/run/resolve-run-options.js';

const base = mkdtempSync(join(tmpdir(), 'hotpath-cpu-interval-'));
after(() => rmSync(base, { recursive: true, force: true }));

test('the lowest rate giving the wanted samples over the load, between 1 and 10 ms', () => {
  assert.equal(defaultCpuIntervalUs(10, false), 10_000);
  assert.equal(defaultCpuIntervalUs(5, false), 5000);
  assert.equal(defaultCpuIntervalUs(2, false), 2000);
  assert.equal(defaultCpuIntervalUs(0.5, false), CPU_INTERVAL_MIN_US);
  assert.equal(defaultCpuIntervalUs(60, false), CPU_INTERVAL_MAX_US);
  // Rounded down to 100 µs: never fewer samples than wanted.
  assert.equal(defaultCpuIntervalUs(3.35, false), 3300);
  for (const s of [1, 2.5, 3.35, 7, 9.99]) assert.ok((s * 1e6) / defaultCpuIntervalUs(s, false) >= CPU_SAMPLES_WANTED, `${s} s`);
});

test('a load without a known end keeps 1 ms', () => {
  assert.equal(defaultCpuIntervalUs(undefined, true), CPU_INTERVAL_MIN_US);
  assert.equal(defaultCpuIntervalUs(10, true), CPU_INTERVAL_MIN_US);
  assert.equal(defaultCpuIntervalUs(0, false), CPU_INTERVAL_MIN_US);
});

test('resolved run options: the default from the duration (10 s when none), --amount 1 ms, --cpu-interval wins', () => {
  const o = (x: Record<string, unknown>) => resolveRunOptions({ command: ['node', 'app.js'], out: base, ...x }, base).cpuInterval;
  assert.equal(o({}), 10_000);
  assert.equal(o({ duration: 4 }), 4000);
  assert.equal(o({ amount: 1000 }), 1000);
  assert.equal(o({ duration: 4, cpuInterval: 250 }), 250);
});
