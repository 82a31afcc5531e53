// The series' figures of --repeat: medians over the runs that have load results, with their
// intervals; a run without load results (or without a report) is left out of the medians, never
// out of the list of run directories.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { repeatLines, repeatSummary, seriesFigures } from '../../src/experiment/repeat-summary.js';
import type { Report } from '../../src/report/report-schema.js';

function report(rps: number, p50: number, p99: number, total = 100): Report {
  return { load: { requests: { total, perSecond: rps }, latency: { p50, p99 } } } as unknown as Report;
}

test('the medians over the runs with load results, each with a 95% interval inside the runs measured', () => {
  const f = seriesFigures([report(100, 2, 10), report(300, 4, 30), report(200, 3, 20), report(0, 0, 0, 0)]);
  assert.ok(f);
  assert.equal(f.runs, 3);
  assert.equal(f.requestsPerSecond.median, 200);
  assert.equal(f.latencyP50Ms.median, 3);
  assert.equal(f.latencyP99Ms.median, 20);
  for (const [m, lo, hi] of [
    [f.requestsPerSecond, 100, 300],
    [f.latencyP50Ms, 2, 4],
    [f.latencyP99Ms, 10, 30],
  ] as const) {
    assert.ok(m.low !== undefined && m.high !== undefined && lo <= m.low && m.low <= m.median && m.median <= m.high && m.high <= hi);
  }
});

test('one run: its figures, no interval; no run with load results: null', () => {
  assert.deepEqual(seriesFigures([report(150, 2, 9)]), {
    runs: 1,
    requestsPerSecond: { median: 150 },
    latencyP50Ms: { median: 2 },
    latencyP99Ms: { median: 9 },
  });
  assert.equal(seriesFigures([report(0, 0, 0, 0)]), null);
  assert.equal(seriesFigures([]), null);
});

test('the summary lists every run directory, the baseline only when it was re-run, and prints both blocks', () => {
  const alone = repeatSummary({ runs: [{ runDir: '/a' }, { runDir: '/b', report: report(100, 1, 5) }], baselineRuns: [] });
  assert.deepEqual(alone.runs, ['/a', '/b']);
  assert.equal(alone.thisBuild?.runs, 1);
  assert.equal('baseline' in alone, false);
  assert.equal('baselineNote' in alone, false);
  assert.deepEqual(repeatLines(alone), ['  this build (1 runs, medians): throughput 100.0 req/s', '    p50 1.00 ms, p99 5.00 ms']);

  const rerun = repeatSummary({
    runs: [{ runDir: '/a', report: report(100, 1, 5) }],
    baselineRuns: [{ runDir: '/base' }],
    baselineNote: 're-run in turn',
  });
  assert.deepEqual(rerun.baselineRuns, ['/base']);
  assert.equal(rerun.baselineNote, 're-run in turn');
  assert.equal(rerun.baseline, null);
  assert.equal(repeatLines(rerun).at(-1), '  baseline: no run has load results');
});
