// Issue 23.11: a --setup request answered with an error status (or not at all) is a warning
// finding, so the terminal and every report say it, and the run is never called healthy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeRun } from '../../src/analyze/analyze-run.js';
import { setupFailed } from '../../src/analyze/setup-failed.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import type { RunData } from '../../src/run-dir/run-data.js';

function withSetup(setup: NonNullable<NonNullable<RunData['load']>['setup']>): RunData {
  const run = syntheticRun({});
  return { ...run, load: { ...run.load!, setup } };
}

test('issue 23.11: a setup request answered 500 or never answered is a warning finding that outranks healthy', () => {
  const run = withSetup([
    { method: 'POST', path: '/users', status: 201 },
    { method: 'POST', path: '/login', status: 500 },
    { method: 'GET', path: '/me', error: 'ECONNRESET' },
  ]);
  const [f] = setupFailed(run);
  assert.equal(f.code, 'HOTPATH_SETUP_FAILED');
  assert.equal(f.severity, 'warning');
  assert.match(f.title, /2 of 3 setup requests failed/);
  assert.match(f.summary, /POST \/login answered 500; GET \/me failed \(ECONNRESET\)/);
  assert.deepEqual(f.evidence.failed, [
    { method: 'POST', path: '/login', status: 500 },
    { method: 'GET', path: '/me', error: 'ECONNRESET' },
  ]);
  const findings = analyzeRun(run);
  assert.ok(findings.some((x) => x.code === 'HOTPATH_SETUP_FAILED'));
  assert.ok(!findings.some((x) => x.code === 'HOTPATH_HEALTHY'), 'a run whose setup failed is not healthy');
});

test('issue 23.11: setup requests that succeeded (2xx, 3xx), or none, say nothing', () => {
  assert.deepEqual(
    setupFailed(
      withSetup([
        { method: 'POST', path: '/login', status: 302 },
        { method: 'POST', path: '/u', status: 201 },
      ]),
    ),
    [],
  );
  assert.deepEqual(setupFailed(syntheticRun({})), []);
});
