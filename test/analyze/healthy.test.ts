// "No performance problem found" needs a run that measured something: some request got a
// response. A run in which none did (a TLS port driven over plain HTTP, a server that drops
// every connection) gets no healthy finding, whatever its other figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeRun } from '../../src/analyze/analyze-run.js';
import { answeredAny, healthyFinding } from '../../src/analyze/healthy.js';
import { buildReport } from '../../src/report/build-report.js';
import { renderReportMarkdown } from '../../src/report/export/report-md.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';

/** A run whose load got no response: every request failed with EOF, the server counted none. */
function noResponses() {
  const run = syntheticRun({ seed: 3, rps: 0, elu: 0.8, cores: 0.8 });
  const load = run.load!;
  load.requests = { ...load.requests, total: 0, sent: 16_862, perSecond: 0 };
  load.errors = { total: 16_859, timeouts: 0, byCode: { EOF: 16_859 }, parse: 0 };
  load.statusCodes = {};
  return run;
}

test('healthy: a run in which no request got a response gets no healthy finding', () => {
  const run = noResponses();
  assert.equal(answeredAny(run), false);
  assert.equal(healthyFinding(run, []), undefined);
  assert.equal(
    analyzeRun(run).some((f) => f.category === 'healthy'),
    false,
  );
});

test("healthy: without a load result, the target's own count decides", () => {
  const served = syntheticRun({ seed: 3 });
  delete served.load;
  assert.equal(answeredAny(served), true);
  assert.equal(healthyFinding(served, [])?.category, 'healthy');
  const idle = syntheticRun({ seed: 3, rps: 0 });
  delete idle.load;
  assert.equal(answeredAny(idle), false);
  assert.equal(healthyFinding(idle, []), undefined);
});

test('healthy: the same server with responses is healthy (the rule is not what keeps it out)', () => {
  assert.equal(analyzeRun(syntheticRun({ seed: 3, elu: 0.5, cores: 0.5 }))[0]?.category, 'healthy');
});

test('report.md: a run that measured nothing is not called healthy', () => {
  const md = renderReportMarkdown(buildReport(noResponses()));
  assert.doesNotMatch(md, /Verdict:\*\* healthy/);
  assert.match(md, /Verdict:\*\* nothing measured: no request got a response/);
});

test("healthy: the capacity leaves out the agent's own share of the loop when the agent measured it, and says so", () => {
  const plain = healthyFinding(syntheticRun({ seed: 3, elu: 0.5, cores: 0.5 }), []);
  assert.ok(plain);
  assert.equal(plain.evidence.capacityCorrectedForAgent, false);
  assert.match(plain.summary, /not corrected for the agent's own cost/);
  const run = syntheticRun({ seed: 3, elu: 0.5, cores: 0.5 });
  // The agent's callbacks took 5 % of each interval on the loop; its worker 1 %.
  for (const t of run.threads)
    for (const s of t.samples) s.agent = { mainUs: Math.round(s.intervalMs * 50), workerUs: Math.round(s.intervalMs * 10) };
  const measured = healthyFinding(run, []);
  assert.ok(measured);
  assert.equal(measured.evidence.capacityCorrectedForAgent, true);
  const ratio = (measured.evidence.estimatedCapacityRps as number) / (plain.evidence.estimatedCapacityRps as number);
  // ELU 0.5 → 0.45 without the agent's 0.05: about 1/0.9 the capacity.
  assert.ok(ratio > 1.08 && ratio < 1.14, `capacity ratio ${ratio}`);
  assert.match(measured.summary, /without the agent's own 5(\.0)? % of the loop; not corrected for the CPU profile's sampling/);
  const share = measured.evidence.agentCostShare as number;
  assert.ok(share > 0 && share < 0.5, `agent cost share ${share}`);
});

test('healthy: the GC share it states is the one gc-pressure reads (the profile where GCs were observed in slices)', async () => {
  const { syntheticCpuProfile } = await import('../fixtures/telemetry/synthetic-profile.js');
  const { gcShareViews } = await import('../../src/analyze/gc-pressure.js');
  const { gcActivity } = await import('../../src/analyze/signals/gc-activity.js');
  const { loadWindow, targetThreads } = await import('../../src/analyze/signals/load-window.js');
  const cwd = '/app';
  // Scavenges 100 times a second, observed 300 ms of each second; the profile puts 3 % of the window in GC.
  const run = syntheticRun({
    seed: 2,
    cwd,
    elu: 0.5,
    minorGcPerS: 100,
    minorGcMs: 0.2,
    gcWindows: { windowMs: 300 },
    profiles: [
      syntheticCpuProfile(
        [
          { name: 'listProducts', file: 'server.js', line: 9, share: 0.47 },
          { name: '(garbage collector)', file: '', line: 0, share: 0.03 },
        ],
        { cwd, idleShare: 0.5 },
      ),
    ],
  });
  const views = gcShareViews(run, gcActivity(targetThreads(run), loadWindow(run)!));
  assert.equal(views.fromProfile, true, JSON.stringify(views));
  const healthy = healthyFinding(run, []);
  assert.ok(healthy, 'healthy');
  assert.match(
    healthy.summary,
    new RegExp(`GC took ${(Math.round(views.share * 1000) / 10).toString().replace('.', '\\.')} %`),
    healthy.summary,
  );
  assert.ok(Math.abs(views.share - 0.03) < 0.01, JSON.stringify(views));
});
