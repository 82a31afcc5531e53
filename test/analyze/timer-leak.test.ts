import { test } from 'node:test';
import assert from 'node:assert/strict';
import { timerLeak } from '../../src/analyze/timer-leak.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

const site = { function: 'track', file: '/srv/app/metrics.js', line: 21, column: 3 };

for (const noise of NOISE_LEVELS) {
  test(`timer leak: an interval per request never cleared (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, rps: 500, timerGrowth: [{ kind: 'interval', perRequest: 1, clearedShare: 0, site }] });
      const [f] = timerLeak(run);
      assert.ok(f);
      assert.equal(f.category, 'timer-leak');
      assert.equal(f.severity, 'critical');
      assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['track', 'metrics.js', 21]);
    }
  });

  test(`timer leak: per-request timeouts that are cleared stay quiet (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, rps: 2000, timerGrowth: [{ kind: 'timeout', perRequest: 1, clearedShare: 0.999, site }] });
      assert.deepEqual(timerLeak(run), []);
    }
  });
}

for (const noise of NOISE_LEVELS) {
  test(`timer leak: a 30 min expiry timeout per session is told as a TTL, with sweep advice, critical by its count (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // 2,000 req/s for the run: tens of thousands pending, none fired or cleared.
      const run = syntheticRun({ seed, noise, rps: 2000, timerGrowth: [{ kind: 'timeout', perRequest: 1, clearedShare: 0, delayMs: 30 * 60_000, site }] });
      const [f] = timerLeak(run);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.severity, 'critical');
      assert.equal(f.evidence.meanDelayMs, 1_800_000);
      assert.match(f.summary, /Each asks for 30 min\./);
      assert.match(f.recommendation, /periodic sweep/);
      assert.doesNotMatch(f.recommendation, /finish/);
    }
  });

  test(`timer leak: short per-request timeouts keep the clear-on-finish advice (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, rps: 100, timerGrowth: [{ kind: 'timeout', perRequest: 1, clearedShare: 0, delayMs: 20_000, site }] });
      const [f] = timerLeak(run);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.severity, 'warning');
      assert.match(f.recommendation, /finish/);
    }
  });
}
