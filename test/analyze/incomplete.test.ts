// No verdict without evidence (issue 17): a run whose target sent no telemetry over the load,
// whose CPU profile is missing, or whose agent lost a part, is never healthy; HOTPATH_INCOMPLETE
// says what is missing and why, and nothing is guessed from another process's profile.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeRun } from '../../src/analyze/analyze-run.js';
import { diagnosisGaps, MIN_TELEMETRY_COVERAGE } from '../../src/analyze/incomplete.js';
import { agentErrorsOf } from '../../src/analyze/signals/agent-errors.js';
import { hotspotsOf } from '../../src/analyze/signals/cpu-view.js';
import type { RunData, ThreadTelemetry } from '../../src/run-dir/run-data.js';
import type { ErrorMessage } from '../../src/agent/protocol.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { syntheticCpuProfile } from '../fixtures/telemetry/synthetic-profile.js';

const cwd = '/srv/app';

/** A healthy server's run as `hotpath run` records it (options.profile true), with its CPU profile. */
function healthyRun(): RunData {
  const cpu = syntheticCpuProfile([{ name: 'handler', file: 'server.js', line: 3, share: 0.2 }], { cwd, idleShare: 0.6 });
  const run = syntheticRun({ seed: 2, cwd, rps: 2000, elu: 0.3, cores: 0.3, latencyMs: 1, profiles: [cpu] });
  return { ...run, meta: { ...run.meta, options: { profile: true } } };
}

const withThread = (run: RunData, f: (t: ThreadTelemetry) => ThreadTelemetry): RunData => ({ ...run, threads: run.threads.map(f) });
const agentError = (t: ThreadTelemetry, what: string, message: string): ErrorMessage => ({
  v: 1,
  pid: t.pid,
  threadId: t.threadId,
  t: 0,
  type: 'agent-error',
  what,
  message,
});
const codes = (run: RunData) => analyzeRun(run).map((f) => f.code);

test('incomplete: the same run with all its evidence is healthy (the rule is not what keeps it healthy out)', () => {
  const run = healthyRun();
  assert.deepEqual(diagnosisGaps(run).missing, []);
  assert.equal(codes(run)[0], 'HOTPATH_HEALTHY');
});

test('incomplete: a target that never sent a sample is never healthy, and the finding says the telemetry is missing', () => {
  const run = withThread(healthyRun(), (t) => ({ ...t, samples: [], gc: [] }));
  const findings = analyzeRun(run);
  assert.ok(!findings.some((f) => f.category === 'healthy'), findings.map((f) => f.code).join());
  const [main] = findings;
  assert.equal(main.code, 'HOTPATH_INCOMPLETE');
  assert.equal(main.severity, 'warning');
  assert.equal(main.category, 'incomplete');
  assert.equal(main.evidence.samplesInWindow, 0);
  assert.equal(main.evidence.telemetryCoverage, 0);
  assert.match(main.title, /telemetry \(no sample during the load\)/);
  assert.match(main.summary, /reported no error/);
});

test('incomplete: samples over the first part of the load only (the agent stopped) do not cover it', () => {
  const base = healthyRun();
  const w = base.loadWindow!;
  const cut = w.start + (w.end - w.start) * (MIN_TELEMETRY_COVERAGE - 0.2);
  const run = withThread(base, (t) => ({ ...t, samples: t.samples.filter((s) => s.t <= cut) }));
  const gaps = diagnosisGaps(run);
  assert.ok(gaps.telemetryCoverage > 0.2 && gaps.telemetryCoverage < MIN_TELEMETRY_COVERAGE, String(gaps.telemetryCoverage));
  assert.match(gaps.missing.join(), /most of the target's telemetry \(its samples cover 3\d %/);
  assert.equal(codes(run)[0], 'HOTPATH_INCOMPLETE');
});

test('incomplete: a missing CPU profile (one was asked for) is said; with --no-profile it is not missing', () => {
  const run = { ...healthyRun(), profiles: [] };
  const [main] = analyzeRun(run);
  assert.equal(main.code, 'HOTPATH_INCOMPLETE');
  assert.equal(main.evidence.cpuProfile, false);
  assert.match(main.title, /the target's CPU profile/);
  const noProfile = { ...run, meta: { ...run.meta, options: { profile: false } } };
  assert.equal(codes(noProfile)[0], 'HOTPATH_HEALTHY');
});

test("incomplete: only a target's profile counts, and no hotspot is taken from another process's profile", () => {
  const base = healthyRun();
  const launcher = { ...base.profiles[0], pid: 999 };
  const run = { ...base, profiles: [launcher] };
  assert.equal(diagnosisGaps(run).cpuProfileMissing, true);
  assert.deepEqual(hotspotsOf(run), []);
  assert.ok(hotspotsOf(base).some((h) => h.function === 'handler'));
});

test("incomplete: a part of the target's agent that failed is named, and the run is not called healthy", () => {
  const run = withThread(healthyRun(), (t) => ({ ...t, agentErrors: [agentError(t, 'hook:route-growth', "'app.router' is deprecated!")] }));
  const [main] = analyzeRun(run);
  assert.equal(main.code, 'HOTPATH_INCOMPLETE');
  assert.deepEqual(main.evidence.failedParts, ['hook:route-growth']);
  assert.match(main.title, /the route-growth hook \(it failed\)/);
  assert.match(main.summary, /hook:route-growth failed in pid \d+ \('app\.router' is deprecated!\)/);
  assert.match(main.summary, /routes/);
});

test("incomplete: a refused setting (config) or a launcher's error is listed, but costs the diagnosis nothing", () => {
  const base = healthyRun();
  const config = withThread(base, (t) => ({ ...t, agentErrors: [agentError(t, 'config', 'cpuSamplingIntervalUs 10 refused')] }));
  assert.equal(codes(config)[0], 'HOTPATH_HEALTHY');
  const launcherThread: ThreadTelemetry = {
    pid: 77,
    threadId: 0,
    listens: [],
    samples: [],
    gc: [],
    growth: [],
    stalls: [],
    agentErrors: [],
  };
  launcherThread.agentErrors.push(agentError(launcherThread, 'listen', 'boom'));
  const withLauncher = { ...base, threads: [...base.threads, launcherThread] };
  assert.equal(codes(withLauncher)[0], 'HOTPATH_HEALTHY');
  assert.deepEqual(
    agentErrorsOf(withLauncher).map((e) => [e.pid, e.what, e.target]),
    [[77, 'listen', false]],
  );
});

test('incomplete: a --url run has no agent by design: nothing is missing', () => {
  const base = healthyRun();
  const run: RunData = {
    ...base,
    threads: [],
    profiles: [],
    meta: { ...base.meta, options: { profile: true, url: 'http://127.0.0.1:3000/' } },
  };
  assert.deepEqual(diagnosisGaps(run).missing, []);
  assert.ok(!codes(run).includes('HOTPATH_INCOMPLETE'));
});
