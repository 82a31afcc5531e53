import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildResult, GENERATOR_SATURATION_ELU } from '../../src/load/result-builder.js';
import { buildPlan } from '../../src/load/load-plan.js';
import { createHistogram } from '../../src/load/histogram.js';
import type { EngineOutput } from '../../src/load/engine.js';
import { C_COMPLETED, C_LATE, C_SENT, COUNTERS } from '../../src/load/worker-protocol.js';

function output(elus: number[], open = false): EngineOutput {
  const counters = new Array<number>(COUNTERS).fill(0);
  counters[C_COMPLETED] = 1000;
  counters[C_SENT] = 1000;
  counters[C_LATE] = open ? 50 : 0; // 5% of the planned sends
  const latency = createHistogram();
  for (let i = 1; i <= 1000; i++) latency.recordValue(i * 10);
  return {
    start: 0,
    end: 2000,
    latency,
    service: open ? latency : null,
    counters,
    statuses: { 200: 1000 },
    errors: {},
    timeline: [],
    workers: elus.map((elu, worker) => ({ worker, connections: 5, elu })),
    inFlight: 0,
    dropped: open ? 17 : 0,
    intended: open ? 1000 : 0,
    maxLagMs: 12,
    cpu: { user: 300_000, system: 200_000 },
  };
}

const plan = (extra: Record<string, unknown> = {}) => buildPlan({ url: 'http://127.0.0.1:1/', connections: 10, ...extra });

test('a worker busy at or above the threshold marks the generator as the bottleneck, with a warning', () => {
  const busy = buildResult(plan(), output([0.3, GENERATOR_SATURATION_ELU + 0.02]), []);
  assert.equal(busy.generator.saturated, true);
  assert.match(busy.generator.warnings.join('\n'), /generator was the bottleneck: worker 1 was busy 92%/);
  const calm = buildResult(plan(), output([0.3, GENERATOR_SATURATION_ELU - 0.05]), []);
  assert.equal(calm.generator.saturated, false);
  assert.deepEqual(calm.generator.warnings, []);
});

test('rates, CPU per request and percentiles come out in the documented units', () => {
  const r = buildResult(plan(), output([0.5]), []);
  assert.equal(r.requests.perSecond, 500);
  assert.equal(r.generator.cpuPerRequestUs, 500);
  assert.equal(r.generator.cpuUserMs, 300);
  assert.equal(r.latency.count, 1000);
  assert.ok(Math.abs(r.latency.p50 - 5) < 0.01, `p50 ${r.latency.p50} ms`);
  assert.ok(Math.abs(r.latency.max - 10) < 0.01, `max ${r.latency.max} ms`);
  assert.equal(r.model, 'closed');
  assert.equal(r.schedule, undefined);
});

test('an open-model run reports its schedule and warns about dropped and late sends', () => {
  const r = buildResult(plan({ rate: 500 }), output([0.5], true), [{ method: 'POST', path: '/setup', status: 500 }]);
  assert.equal(r.model, 'open');
  assert.deepEqual(r.schedule, { late: 50, dropped: 17, intended: 1000, maxLagMs: 12 });
  const w = r.generator.warnings.join('\n');
  assert.match(w, /17 of 1000 planned sends were never made/);
  assert.match(w, /50 sends \(5\.0%\) left late/);
  assert.match(w, /Setup request POST \/setup failed: status 500/);
});
