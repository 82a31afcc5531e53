import { test } from 'node:test';
import assert from 'node:assert/strict';
import { growthPerRequest, midReading } from '../../../src/analyze/signals/growth-per-request.js';
import type { RequestSeries } from '../../../src/analyze/signals/request-series.js';

const w = { start: 1000, end: 6000, durationMs: 5000 };
/** 400 requests a second, a sample every 100 ms. */
const series: RequestSeries = { t: [], cumulative: [] };
for (let t = 1000; t <= 6000; t += 100) {
  series.t.push(t);
  series.cumulative.push(((t - 1000) / 1000) * 400);
}

test('growth per request: the middle is the lowest reading from 30 % to 70 % of the window (readings under load only err high)', () => {
  const r = (t: number, bytes: number) => ({ t, bytes });
  assert.deepEqual(midReading([r(1200, 5), r(2600, 9), r(3400, 8), r(4600, 7)], w), r(3400, 8));
  assert.equal(midReading([r(1200, 5), r(5000, 9)], w), undefined);
});

test('growth per request: rates of the second half and the first, by the requests finished between the readings', () => {
  const g = growthPerRequest(series, w, { t: 1000, bytes: 10e6 }, { t: 3500, bytes: 11e6 }, { t: 6500, bytes: 12e6 });
  assert.ok(g);
  assert.equal(g.mid.requests, 1000);
  assert.equal(g.end.requests, 2000, 'the end reading counts every request of the window');
  assert.equal(g.lateRequests, 1000);
  assert.equal(g.lateGrowth, 1e6);
  assert.equal(g.lateBytesPerRequest, 1000);
  assert.equal(g.earlyBytesPerRequest, 1000);
  // Without a start reading only the second half is known.
  const late = growthPerRequest(series, w, undefined, { t: 3500, bytes: 11e6 }, { t: 6500, bytes: 11.2e6 });
  assert.equal(late?.earlyBytesPerRequest, undefined);
  assert.equal(Math.round(late!.lateBytesPerRequest), 200);
  // No request before the middle, or none after it: no rate.
  assert.equal(growthPerRequest(series, w, undefined, { t: 1000, bytes: 1 }, { t: 6500, bytes: 2 }), undefined);
  assert.equal(
    growthPerRequest({ t: [1000, 7000], cumulative: [0, 0] }, w, undefined, { t: 3500, bytes: 1 }, { t: 6500, bytes: 2 }),
    undefined,
  );
});
