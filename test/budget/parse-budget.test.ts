import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBudget, parseMaxRegression } from '../../src/budget/parse-budget.js';
import { readBudgets } from '../../src/budget/apply-budgets.js';

test('budgets read latency in ms, s or us, throughput, errors and finding severities', () => {
  assert.deepEqual(parseBudget('p99<50ms'), { kind: 'limit', text: 'p99<50ms', metric: 'p99', op: '<', value: 50 });
  assert.deepEqual(parseBudget('p50 <= 0.2s'), { kind: 'limit', text: 'p50 <= 0.2s', metric: 'p50', op: '<=', value: 200 });
  assert.equal((parseBudget('p999<500us') as { value: number }).value, 0.5);
  assert.deepEqual(parseBudget('rps>2000'), { kind: 'limit', text: 'rps>2000', metric: 'rps', op: '>', value: 2000 });
  assert.deepEqual(parseBudget('errors<1%'), { kind: 'limit', text: 'errors<1%', metric: 'errorRate', op: '<', value: 0.01 });
  assert.equal((parseBudget('errors<3') as { metric: string }).metric, 'errors');
  assert.deepEqual(parseBudget('no critical'), { kind: 'no-findings', text: 'no critical', severity: 'critical' });
  assert.deepEqual(parseBudget('no warnings'), { kind: 'no-findings', text: 'no warnings', severity: 'warning' });
  assert.deepEqual(parseMaxRegression('5%'), { kind: 'regression', text: 'max regression 5%', maxShare: 0.05 });
});

test('a budget that cannot be read is HOTPATH_ERR_BUDGET, a usage error', () => {
  for (const bad of ['p99<', 'p99<50%', 'rps>10ms', 'latency<5ms', 'fast please', 'errors<5ms']) {
    assert.throws(
      () => parseBudget(bad),
      (e: { code?: string; showUsage?: boolean }) => e.code === 'HOTPATH_ERR_BUDGET' && e.showUsage === true,
      bad,
    );
  }
  for (const bad of ['five', '100%', '-3%']) assert.throws(() => parseMaxRegression(bad), { code: 'HOTPATH_ERR_BUDGET' });
  assert.throws(() => readBudgets({ maxRegression: '5%' }), { code: 'HOTPATH_ERR_BUDGET' });
  assert.equal(readBudgets({ assert: ['p99<5ms'], baseline: 'x', maxRegression: '5' }).length, 2);
});
