import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareFindings } from '../../src/compare/compare-findings.js';
import type { Finding } from '../../src/analyze/finding.js';

const finding = (code: string, fn: string | undefined, severity: Finding['severity'], line = 1): Finding => ({
  code,
  category: 'sync-io',
  severity,
  title: code,
  summary: '',
  evidence: {},
  recommendation: '',
  impact: 0.5,
  ...(fn ? { culprit: { function: fn, file: 'app.js', line } } : {}),
});

test('findings are matched by code and culprit function and file, whatever the line', () => {
  const c = compareFindings(
    [
      finding('HOTPATH_SYNC_IO', 'login', 'critical', 24),
      finding('HOTPATH_GC_PRESSURE', undefined, 'info'),
      finding('HOTPATH_SYNC_IO', 'signup', 'warning'),
    ],
    [finding('HOTPATH_SYNC_IO', 'signup', 'info', 30), finding('HOTPATH_IO_WAIT', undefined, 'warning')],
  );
  assert.deepEqual(
    c.resolved.map((f) => `${f.code} ${f.culprit?.function ?? ''}`),
    ['HOTPATH_SYNC_IO login', 'HOTPATH_GC_PRESSURE '],
  );
  assert.deepEqual(
    c.new.map((f) => f.code),
    ['HOTPATH_IO_WAIT'],
  );
  assert.equal(c.stillPresent.length, 1);
  assert.equal(c.stillPresent[0].severityBefore, 'warning');
  assert.equal(c.stillPresent[0].severityAfter, 'info');
  assert.equal(c.stillPresent[0].culprit?.line, 30);
});

test('a healthy finding is neither resolved, new nor still present', () => {
  const healthy: Finding = { ...finding('HOTPATH_HEALTHY', undefined, 'info'), category: 'healthy' };
  const c = compareFindings([healthy], [healthy, finding('HOTPATH_SYNC_IO', 'login', 'critical')]);
  assert.deepEqual(c.resolved, []);
  assert.deepEqual(c.stillPresent, []);
  assert.deepEqual(
    c.new.map((f) => f.code),
    ['HOTPATH_SYNC_IO'],
  );
});
