// One read of a run's profile (src/profile/run-cpu-profile.ts, run-heap-profile.ts): the
// analysis, report.html and the exports of one run share it, and a file that cannot be read is
// HOTPATH_ERR_PROFILE for every reader, without a second try.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCpuProfile } from '../../src/profile/run-cpu-profile.js';
import { runHeapProfile } from '../../src/profile/run-heap-profile.js';
import { cpuViewOf } from '../../src/analyze/signals/cpu-view.js';
import { analyzeRun } from '../../src/analyze/analyze-run.js';
import { exportProfile } from '../../src/report/export/export-profile.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { syntheticCpuProfile } from '../fixtures/telemetry/synthetic-profile.js';

const cwd = '/srv/app';

test('the CPU view and an export of one run read and expand the profile once: the export works after the file is gone', async () => {
  const ref = syntheticCpuProfile([{ name: 'handler', file: 'server.js', line: 3, share: 0.6 }], { cwd });
  const run = syntheticRun({ cwd, rps: 500, elu: 0.9, cores: 0.9, profiles: [ref] });
  analyzeRun(run);
  const view = cpuViewOf(run);
  assert.ok(view, 'a CPU view');
  assert.equal(view.profile, runCpuProfile(run, ref), 'the view holds the run’s one profile');
  const moved = `${ref.path}.away`;
  renameSync(ref.path, moved);
  try {
    const out = join(mkdtempSync(join(tmpdir(), 'hotpath-run-profiles-')), 'cpu.folded');
    const result = await exportProfile(run, { format: 'folded', out });
    assert.ok(result.total > 0);
    assert.match(readFileSync(out, 'utf8'), /handler/);
  } finally {
    renameSync(moved, ref.path);
  }
});

test('a profile that cannot be read is HOTPATH_ERR_PROFILE, and stays so for the run once tried', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-run-profiles-'));
  const path = join(dir, 'cpu-1-0.cpuprofile');
  const run = syntheticRun({ cwd });
  assert.throws(() => runCpuProfile(run, { path }), { code: 'HOTPATH_ERR_PROFILE' });
  writeFileSync(path, readFileSync(syntheticCpuProfile([{ name: 'f', file: 'a.js', line: 1, share: 0.5 }], { cwd }).path));
  assert.throws(() => runCpuProfile(run, { path }), { code: 'HOTPATH_ERR_PROFILE' }, 'not read again for this run');
  assert.ok(runCpuProfile(syntheticRun({ cwd }), { path }).nodes.length > 0, 'another run reads it');
  const heap = join(dir, 'heap-1-0.heapprofile');
  writeFileSync(heap, '{"head":');
  assert.throws(() => runHeapProfile(run, { path: heap }), { code: 'HOTPATH_ERR_PROFILE' });
  rmSync(dir, { recursive: true, force: true });
});
