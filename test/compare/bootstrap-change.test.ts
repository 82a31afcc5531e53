// The statistics behind `hotpath compare`'s verdicts, on seeded synthetic per-second series at
// several noise levels: the same server measured twice is no significant difference, a 2x
// change is, and the interval is the same every time it is computed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapChange } from '../../src/compare/bootstrap-change.js';
import { seededRandom } from '../../src/compare/seeded-random.js';
import { DEFAULT_MIN_EFFECT, verdictOf } from '../../src/compare/metric-verdict.js';

/** `n` per-second throughputs around `mean`, each off by up to ±noise (a share), seeded. */
function series(seed: number, n: number, mean: number, noise: number): number[] {
  const rnd = seededRandom(seed);
  return Array.from({ length: n }, () => mean * (1 + noise * (2 * rnd() - 1)));
}

for (const noise of [0.02, 0.1, 0.25]) {
  for (const n of [3, 10]) {
    test(`same distribution, ${n} seconds, noise ±${noise * 100}%: no significant difference`, () => {
      for (let seed = 1; seed <= 20; seed++) {
        const c = bootstrapChange(series(seed, n, 1000, noise), series(seed + 100, n, 1000, noise));
        assert.equal(verdictOf(c, DEFAULT_MIN_EFFECT, true), 'no significant difference', `seed ${seed}: ${JSON.stringify(c)}`);
      }
    });
    test(`twice the throughput, ${n} seconds, noise ±${noise * 100}%: better, and the interval holds the change`, () => {
      for (let seed = 1; seed <= 20; seed++) {
        const c = bootstrapChange(series(seed, n, 1000, noise), series(seed + 100, n, 2000, noise));
        assert.equal(verdictOf(c, DEFAULT_MIN_EFFECT, true), 'better', `seed ${seed}: ${JSON.stringify(c)}`);
        assert.ok(c.low! <= c.change! && c.change! <= c.high!);
        assert.ok(c.change! > 0.6 && c.change! < 1.5);
      }
    });
  }
}

test('half the p99 is better when lower is better, worse when higher is', () => {
  const c = bootstrapChange(series(1, 5, 40, 0.1), series(2, 5, 20, 0.1));
  assert.equal(verdictOf(c, DEFAULT_MIN_EFFECT, false), 'better');
  assert.equal(verdictOf(c, DEFAULT_MIN_EFFECT, true), 'worse');
});

test('seeded: the same samples give the same interval', () => {
  const b = series(7, 4, 100, 0.3);
  const a = series(8, 4, 110, 0.3);
  assert.deepEqual(bootstrapChange(b, a), bootstrapChange(b, a));
});

test('too few values: a change but no interval, and no verdict', () => {
  const c = bootstrapChange([100], [200]);
  assert.equal(c.change, 1);
  assert.equal(c.low, undefined);
  assert.equal(verdictOf(c, DEFAULT_MIN_EFFECT, true), 'not enough data');
  assert.deepEqual(bootstrapChange([], [1, 2]), {});
  assert.deepEqual(bootstrapChange([0, 0], [1, 2]), {});
});
