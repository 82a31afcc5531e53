import { test } from 'node:test';
import assert from 'node:assert/strict';
import { median, medianChange, medianInterval } from '../../src/compare/median-interval.js';

test('median and its bootstrap interval over whole runs: seeded, the median inside, none with one run', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 2, 3]), 2.5);
  const xs = [100, 104, 98, 101, 97];
  const a = medianInterval(xs);
  assert.equal(a.median, 100);
  assert.ok(a.low! <= 100 && a.high! >= 100 && a.low! >= 97 && a.high! <= 104, JSON.stringify(a));
  assert.deepEqual(medianInterval(xs), a, 'the same runs give the same interval');
  assert.deepEqual(medianInterval([5]), { median: 5, n: 1 });
});

test('medianChange: the same distribution reaches 0; a shift beyond the spread excludes it', () => {
  const same = medianChange([100, 104, 98, 101], [99, 103, 100, 97]);
  assert.ok(same.low! < 0 && same.high! > 0, JSON.stringify(same));
  const faster = medianChange([100, 104, 98, 101], [150, 155, 149, 152]);
  assert.ok(faster.low! > 0.4 && faster.high! < 0.6, JSON.stringify(faster));
  assert.deepEqual(medianChange([0], [1, 2]), {});
  const one = medianChange([100, 101], [110]);
  assert.deepEqual(Object.keys(one), ['change'], 'one run after: no interval');
  assert.ok(Math.abs(one.change! - (110 / 100.5 - 1)) < 1e-12);
});

test('medianChange against one recorded run: its seconds give its spread, scaled to its own figure', () => {
  // The recorded run's figure is 200 (a whole-window p99), its seconds' median 100: scaled x2.
  const c = medianChange([200], [200, 210, 190], [90, 100, 110, 100]);
  assert.ok(c.change === 0);
  assert.ok(c.low! < 0 && c.high! > 0, JSON.stringify(c));
  assert.ok(c.low! > -0.3 && c.high! < 0.3, `the seconds were scaled to the run's level: ${JSON.stringify(c)}`);
  assert.deepEqual(Object.keys(medianChange([200], [200, 210], [100])), ['change'], 'one second is no spread');
});
