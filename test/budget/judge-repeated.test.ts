import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeRepeated } from '../../src/budget/judge-repeated.js';
import { parseBudget, parseMaxRegression } from '../../src/budget/parse-budget.js';
import type { Report } from '../../src/report/report-schema.js';
import type { LoadResult } from '../../src/load/load-result.js';

function load(rps: number, p99: number, seconds: number[] = []): LoadResult {
  return {
    requests: { total: rps * 10, perSecond: rps },
    errors: { total: 0 },
    durationMs: seconds.length * 1000 || 10_000,
    latency: { p50: p99 / 4, p75: p99 / 2, p90: p99 / 1.5, p97_5: p99 / 1.1, p99, p999: p99 * 1.2, max: p99 * 2 },
    timeline: seconds.map((r, i) => ({ second: i + 1, requests: r, p50: p99 / 4, p99 })),
  } as unknown as LoadResult;
}
const report = (l: LoadResult | undefined, critical: string[] = []) =>
  ({ load: l, findings: critical.map((code) => ({ code, severity: 'critical' })) }) as unknown as Report;

test('limits on the median of the runs, with the interval; a budget the median breaks fails', () => {
  const reports = [report(load(1000, 40)), report(load(1100, 60)), report(load(1050, 45))];
  const [rps, p99] = judgeRepeated([parseBudget('rps>1000'), parseBudget('p99<50ms')], reports);
  assert.equal(rps.passed, true);
  assert.match(rps.actual, /^median 1050\.0 req\/s over 3 runs \(95% interval [\d.]+ req\/s … [\d.]+ req\/s\)$/);
  assert.equal(p99.passed, true, 'one slow run of three does not fail the median');
  assert.match(p99.actual, /^median p99 45\.00 ms over 3 runs/);
  const [slow] = judgeRepeated([parseBudget('p99<50ms')], [report(load(1000, 60)), report(load(1000, 55)), report(load(1000, 40))]);
  assert.equal(slow.passed, false);
  const [missing] = judgeRepeated([parseBudget('rps>1')], [report(undefined), report(undefined), report(load(10, 1))]);
  assert.equal(missing.passed, false);
  assert.equal(missing.actual, '2 of 3 runs have no load results');
});

test('no critical fails when most runs show a critical finding, and says in how many', () => {
  const one = judgeRepeated(
    [parseBudget('no critical')],
    [report(load(1, 1), ['HOTPATH_SYNC_IO']), report(load(1, 1)), report(load(1, 1))],
  );
  assert.deepEqual(one[0], { budget: 'no critical', passed: true, actual: 'HOTPATH_SYNC_IO in 1 of 3 runs' });
  const most = judgeRepeated([parseBudget('no critical')], [report(load(1, 1), ['A']), report(load(1, 1), ['A']), report(load(1, 1))]);
  assert.equal(most[0].passed, false);
  assert.equal(judgeRepeated([parseBudget('no critical')], [report(load(1, 1))])[0].actual, 'no critical finding in any of 1 runs');
});

test('max regression on the change of the medians: against re-runs, against a recorded run, and without a baseline', () => {
  const budget = parseMaxRegression('10%');
  const now = [report(load(600, 80)), report(load(620, 82)), report(load(610, 79))];
  const reruns = judgeRepeated([budget], now, { kind: 'reruns', loads: [load(1000, 40), load(1020, 41), load(990, 42)] });
  assert.deepEqual(
    reruns.map((r) => [r.budget, r.passed]),
    [
      ['throughput max regression 10%', false],
      ['latency p50 max regression 10%', false],
      ['latency p99 max regression 10%', false],
    ],
  );
  assert.match(
    reruns[0].actual,
    /^-39\.[0-9]% \(95% interval -[\d.]+% … -[\d.]+%\), median of 3 runs vs 3 baseline runs \(re-run in turn\)$/,
  );
  const same = judgeRepeated([budget], [report(load(1000, 40)), report(load(990, 41))], {
    kind: 'recorded',
    load: load(1000, 40, [950, 1000, 1050, 980]),
  });
  assert.ok(
    same.every((r) => r.passed),
    JSON.stringify(same),
  );
  assert.match(same[0].actual, /vs the recorded baseline run$/);
  assert.deepEqual(judgeRepeated([budget], now), [
    { budget: 'max regression 10%', passed: false, actual: 'no baseline to compare with (--baseline)' },
  ]);
  assert.equal(judgeRepeated([budget], now, { kind: 'error', error: new Error('gone') })[0].actual, 'not compared: gone');
});
