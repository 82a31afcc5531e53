import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lateGrowthShare, lateShareAt } from '../../../src/analyze/signals/growth-series.js';
import { loadWindow } from '../../../src/analyze/signals/load-window.js';
import { syntheticRun } from '../../fixtures/telemetry/synthetic-run.js';

test('late share: the value at the midpoint is read between the readings around it', () => {
  // A steady rise read once a unit, the midpoint (2.35) between two readings: half the rise is after it.
  const steady = [0.7, 1.7, 2.7, 3.7, 4].map((x) => ({ x, v: 100 * x }));
  assert.ok(Math.abs(lateShareAt(steady) - 0.5) < 1e-9, String(lateShareAt(steady)));
  // Flat from the second reading on (a pool filled early): nothing after the midpoint.
  assert.equal(lateShareAt([0, 1, 2, 3, 4].map((x) => ({ x, v: x === 0 ? 0 : 50 }))), 0);
  // No rise, a single reading, no span: 0.
  assert.equal(lateShareAt([0, 1, 2].map((x) => ({ x, v: 10 }))), 0);
  assert.equal(lateShareAt([{ x: 1, v: 5 }]), 0);
  assert.equal(
    lateShareAt([
      { x: 1, v: 5 },
      { x: 1, v: 9 },
    ]),
    0,
  );
});

test('late share: a count that grows with every request reads half its rise late, however unevenly the requests came', () => {
  // 4,000 req/s in the first half of the window, a fifth of it in the second (the machine slowed):
  // in time most of the rise is early; per request served it is even.
  for (const rps of [(p: number) => (p < 0.5 ? 4000 : 800), (p: number) => (p < 0.5 ? 800 : 4000), 2000]) {
    const run = syntheticRun({
      seed: 1,
      rps,
      timerGrowth: [
        { kind: 'timeout', perRequest: 1, clearedShare: 0, site: { function: 'f', file: '/srv/app/a.js', line: 1, column: 1 } },
      ],
    });
    const late = lateGrowthShare(run.threads[0], (m) => m.timers[0]?.pending, loadWindow(run));
    assert.ok(late > 0.4 && late < 0.6, `late share ${late}`);
  }
});
