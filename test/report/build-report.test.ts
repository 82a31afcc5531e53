import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildReport } from '../../src/report/build-report.js';
import { writeReports } from '../../src/report/write-reports.js';
import { REPORT_VERSION, type Report } from '../../src/report/report-schema.js';
import { CATEGORIES } from '../../src/analyze/finding.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { syntheticCpuProfile } from '../fixtures/telemetry/synthetic-profile.js';

const cwd = '/srv/app';

function blockedRun() {
  const cpu = syntheticCpuProfile(
    [
      {
        name: 'login',
        file: 'app.js',
        line: 14,
        share: 0.05,
        callee: { name: 'pbkdf2Sync', file: 'node:internal/crypto/pbkdf2', share: 0.7 },
      },
      { name: 'render', file: 'views.js', line: 3, share: 0.1 },
    ],
    { cwd },
  );
  return syntheticRun({
    cwd,
    rps: 120,
    elu: 0.99,
    eldP99Ms: 180,
    cores: 1,
    latencyMs: 150,
    profiles: [cpu],
    minorGcPerS: 10,
    minorGcMs: 1,
  });
}

test('buildReport: version, target, load and a telemetry summary over the load window', () => {
  const run = blockedRun();
  const report = buildReport(run);
  assert.equal(report.version, REPORT_VERSION);
  assert.deepEqual(report.target.command, ['node', 'server.js']);
  assert.equal(report.target.cwd, cwd);
  assert.equal(report.target.outcome.status, 'completed');
  assert.equal(report.load, run.load);
  const t = report.telemetry!;
  assert.equal(t.window?.durationMs, 10_000);
  assert.ok(t.eventLoop.utilizationMean > 0.9);
  assert.ok(t.eventLoop.delayP99Ms >= 150);
  assert.equal(t.gc.count, 100 + 1);
  assert.ok(Math.abs(t.cpu.coresUsedMean - 1) < 0.15, `cores ${t.cpu.coresUsedMean}`);
  assert.equal(
    t.http?.requests,
    run.threads[0].samples.reduce((a, s) => a + (s.http?.finished ?? 0), 0),
  );
  assert.deepEqual(t.targets, [{ pid: 4242, threadId: 0, port: 3000 }]);
});

test('buildReport: hotspots by attributed self time (pbkdf2 charged to login), findings ordered, categories from the vocabulary', () => {
  const report = buildReport(blockedRun());
  const [top] = report.hotspots;
  assert.deepEqual([top.function, top.file, top.line, top.kind], ['login', 'app.js', 14, 'app']);
  assert.ok(top.selfShare > 0.7 && top.selfShare <= 1);
  assert.ok(report.findings.length > 0);
  assert.equal(report.findings[0].category, 'event-loop-blocking');
  for (const f of report.findings) assert.ok((CATEGORIES as readonly string[]).includes(f.category));
  assert.ok(!report.findings.some((f) => f.category === 'healthy'));
});

test('buildReport: a run without telemetry (--url) still reports load and says healthy from the outside', () => {
  const run = syntheticRun({});
  run.threads = [];
  const report = buildReport(run);
  assert.equal(report.telemetry, null);
  assert.deepEqual(report.hotspots, []);
  assert.equal(report.findings[0]?.category, 'healthy');
});

test('writeReports: writes report.json (identical to the returned report), report.md and report.html', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-report-'));
  try {
    const run = { ...blockedRun(), dir };
    const report = await writeReports(dir, { run });
    const onDisk = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
    assert.deepEqual(onDisk, JSON.parse(JSON.stringify(report)));
    assert.match(readFileSync(join(dir, 'report.md'), 'utf8'), /login/);
    assert.ok(existsSync(join(dir, 'report.html')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
