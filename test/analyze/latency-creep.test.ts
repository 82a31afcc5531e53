import { test } from 'node:test';
import assert from 'node:assert/strict';
import { latencyCreep, uniformSlowdown, type Grower } from '../../src/analyze/latency-creep.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

for (const noise of NOISE_LEVELS) {
  test(`latency creep: latency and CPU per request rising with nothing else growing (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, rps: (p) => 1000 / (1 + 3 * p), cores: 1, latencyMs: (p) => 2 + 6 * p });
      const [f] = latencyCreep(run);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.code, 'HOTPATH_LATENCY_CREEP');
      assert.equal(f.category, 'handler-growth');
      assert.ok((f.evidence.latencyLateMs as number) > (f.evidence.latencyEarlyMs as number) * 2);
    }
  });

  test(`latency creep: flat latency with noise stays quiet (noise ${noise})`, () => {
    for (const seed of SEEDS) assert.deepEqual(latencyCreep(syntheticRun({ seed, noise, latencyMs: 3 })), []);
  });
}

test('latency creep: rising latency with flat CPU per request is growing wait (io-wait)', () => {
  const [f] = latencyCreep(syntheticRun({ rps: 1000, cores: 0.3, elu: 0.3, latencyMs: (p) => 5 + 30 * p }));
  assert.equal(f.category, 'io-wait');
});

test('latency creep: left to the growth analyzer when listeners explain it', () => {
  const run = syntheticRun({
    rps: 300, latencyMs: (p) => 2 + 60 * p,
    listenerGrowth: [{ emitter: 'Server', event: 'after', perRequest: 1, site: { function: 'a', file: '/srv/app/u.js', line: 1, column: 1 } }],
  });
  assert.deepEqual(latencyCreep(run), []);
});

test('latency creep: a slowdown spread over every function is not work growth in one of them', () => {
  const trend = (early: number, late: number) => ({ cpuPerRequestEarlyMs: early, cpuPerRequestLateMs: late }) as Parameters<typeof uniformSlowdown>[0];
  const grower = (early: number, late: number): Grower => ({ function: 'f', file: 'a.js', line: 1, kind: 'app', earlyMsPerRequest: early, lateMsPerRequest: late, shareOfGrowth: 1 });
  // Measured in CI on a shared machine: JSON work 2.29 -> 3.14 ms while the rest went 1.95 -> 3.19 ms.
  assert.equal(uniformSlowdown(trend(4.24, 6.33), grower(2.29, 3.14)), true);
  // A function whose work per request triples while the rest stays put is the culprit.
  assert.equal(uniformSlowdown(trend(3, 7), grower(2, 6)), false);
  // A function that appears only late is growth too.
  assert.equal(uniformSlowdown(trend(3, 5), grower(0, 2)), false);
});
