// A loop blocked by the structured clone of the messages it sends to a worker pool, beside that
// pool saturated: the blocking finding (the sending function) leads, the off-loop finding names it
// as its cause (analyze-run's cloneOfHandOver).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cloneOfHandOver, orderFindings } from '../../src/analyze/analyze-run.js';
import type { Finding } from '../../src/analyze/finding.js';

const blocking = (work: string, file = 'lib/quotes.js'): Finding => ({
  code: 'HOTPATH_EVENT_LOOP_BLOCKING',
  category: 'event-loop-blocking',
  severity: 'warning',
  title: 'The event loop is blocked',
  summary: 'sendJob spends 41 % of the CPU cloning.',
  evidence: { work },
  recommendation: '',
  impact: 0.41,
  culprit: { function: 'sendJob', file, line: 24 },
});

// The figures of the worker-clone-quote scenario's run where the pool led (Node 20, full suite).
const pool = (severity: Finding['severity'] = 'warning'): Finding => ({
  code: 'HOTPATH_OFF_LOOP_CPU',
  category: 'off-loop-cpu',
  severity,
  title: 'Work off the event loop is the bottleneck',
  summary: 'Requests wait for the worker.',
  evidence: { kind: 'worker-threads', offLoopCores: 0.931, workerMessagesPerRequest: 1, sentAt: 'lib/quotes.js:25' },
  recommendation: '',
  impact: 0.62,
  culprit: { function: 'quote', file: 'lib/quotes.js', line: 30 },
});

test('cloneOfHandOver: clone work sending to a saturated pool from the same file leads it and is named as its cause', () => {
  const out = orderFindings(cloneOfHandOver([pool(), blocking('clone')]));
  assert.equal(out[0].code, 'HOTPATH_EVENT_LOOP_BLOCKING');
  assert.equal(out[0].evidence.explains, 'HOTPATH_OFF_LOOP_CPU');
  assert.equal(out[0].impact, 0.62, 'the higher impact of the two');
  assert.equal(out[1].evidence.causedBy, 'HOTPATH_EVENT_LOOP_BLOCKING');
  assert.match(out[1].summary, /serialized on the loop in sendJob \(lib\/quotes\.js:24\)/);
  // The higher severity of the two.
  assert.equal(orderFindings(cloneOfHandOver([pool('critical'), blocking('clone')]))[0].severity, 'critical');
});

test('cloneOfHandOver: other blocking work, or a clone sent from elsewhere, leaves the pool as it was', () => {
  for (const findings of [
    [pool(), blocking('json')],
    [pool(), blocking('clone', 'lib/other.js')],
  ]) {
    const out = cloneOfHandOver(findings);
    assert.deepEqual(out, findings);
  }
});
