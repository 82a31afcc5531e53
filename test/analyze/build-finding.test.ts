// The finding builder: the registry's title when the analyzer has none, no culprit key without a
// culprit, and a growth finding's latency creep as its closing evidence and its impact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildFinding, growthSeverity } from '../../src/analyze/build-finding.js';
import { findingCodes } from '../../src/analyze/finding-codes.js';
import type { LatencyTrend } from '../../src/analyze/signals/latency-trend.js';

const parts = {
  code: 'HOTPATH_TIMER_LEAK',
  category: 'timer-leak',
  severity: 'warning',
  summary: 'Timers pile up.',
  evidence: { pending: 300 },
  recommendation: 'Clear them.',
} as const;

function trend(creeping: boolean): LatencyTrend {
  return {
    seconds: [0, 1, 2, 3],
    p50Ms: [2, 4, 6, 8],
    cpuPerRequestMs: [0.1, 0.1, 0.1, 0.1],
    earlyMs: 2,
    lateMs: 8,
    ratio: 4,
    slopeMsPerS: 2,
    r2: 0.99,
    cpuPerRequestEarlyMs: 0.1,
    cpuPerRequestLateMs: 0.1,
    serverEarlyMs: 2,
    serverLateMs: 8,
    creeping,
  };
}

test('a finding without a title of its own takes its code title from the registry; an own title is kept', () => {
  assert.equal(buildFinding({ ...parts, impact: 0.1 }).title, findingCodes.HOTPATH_TIMER_LEAK);
  assert.equal(buildFinding({ ...parts, title: 'setInterval timers pile up', impact: 0.1 }).title, 'setInterval timers pile up');
  assert.equal(buildFinding({ ...parts, title: undefined, impact: 0.1 }).title, findingCodes.HOTPATH_TIMER_LEAK);
});

test('the culprit is left out when there is none, and written between evidence and recommendation when there is', () => {
  const without = buildFinding({ ...parts, culprit: undefined, impact: 0.1 });
  assert.equal('culprit' in without, false);
  const culprit = { function: 'startHeartbeat', file: 'lib/session.js', line: 4 };
  const withCulprit = buildFinding({ ...parts, culprit, impact: 0.1 });
  assert.deepEqual(withCulprit.culprit, culprit);
  assert.deepEqual(Object.keys(withCulprit), [
    'code',
    'category',
    'severity',
    'title',
    'summary',
    'evidence',
    'culprit',
    'recommendation',
    'impact',
  ]);
});

test('a growth that makes latency creep closes its evidence with the trend and takes the creep share as impact', () => {
  const f = buildFinding({ ...parts, growth: { trend: trend(true), baseImpact: 0.05 } });
  assert.deepEqual(f.evidence, { pending: 300, latencyEarlyMs: 2, latencyLateMs: 8, latencySlopeMsPerS: 2, latencyTrendR2: 0.99 });
  assert.equal(f.impact, 0.75);
});

test('a growth without creep keeps its own evidence and its base impact', () => {
  for (const t of [trend(false), undefined]) {
    const f = buildFinding({ ...parts, growth: { trend: t, baseImpact: 0.05 } });
    assert.deepEqual(f.evidence, { pending: 300 });
    assert.equal(f.impact, 0.05);
  }
});

test('a growth is critical for its own reasons or when latency creeps, else a warning', () => {
  assert.equal(growthSeverity(true, undefined), 'critical');
  assert.equal(growthSeverity(false, trend(true)), 'critical');
  assert.equal(growthSeverity(false, trend(false)), 'warning');
  assert.equal(growthSeverity(false, undefined), 'warning');
});
