// A loop blocked by setting up connections, beside the connection churn that causes it: the
// churn finding leads and the blocking finding names it as its cause (analyze-run's setupWorkOfChurn).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { orderFindings, setupWorkOfChurn } from '../../src/analyze/analyze-run.js';
import type { Finding } from '../../src/analyze/finding.js';

const blocking = (work: string, severity: Finding['severity'] = 'critical'): Finding => ({
  code: 'HOTPATH_EVENT_LOOP_BLOCKING',
  category: 'event-loop-blocking',
  severity,
  title: 'The event loop is blocked',
  summary: 'checkStock spends 62 % of the CPU.',
  evidence: { work, workLabel: 'sockets' },
  recommendation: '',
  impact: 0.6,
  culprit: { function: 'handle', file: 'server.js', line: 12 },
});

const churn = (origin = 'http://127.0.0.1:7001', severity: Finding['severity'] = 'warning'): Finding => ({
  code: 'HOTPATH_OUTGOING_CONNECTION_CHURN',
  category: 'connection-churn',
  severity,
  title: `Requests to ${origin} open a new connection almost every time`,
  summary: '',
  evidence: { origin, calls: 900, newConnections: 899 },
  recommendation: '',
  impact: 0.25,
  culprit: { function: 'fetchStock', file: 'lib/inventory.js', line: 7 },
});

test('setupWorkOfChurn: blocking whose work is connection set-up is led by the churn that causes it, which names the site', () => {
  for (const work of ['net', 'http-client']) {
    const out = orderFindings(setupWorkOfChurn([blocking(work), churn()]));
    assert.equal(out[0].code, 'HOTPATH_OUTGOING_CONNECTION_CHURN', work);
    assert.equal(out[0].severity, 'critical', 'the higher severity of the two');
    assert.equal(out[0].impact, 0.6);
    assert.equal(out[0].evidence.explains, 'HOTPATH_EVENT_LOOP_BLOCKING');
    const b = out[1];
    assert.equal(b.evidence.causedBy, 'HOTPATH_OUTGOING_CONNECTION_CHURN');
    assert.equal(b.evidence.causeSite, 'lib/inventory.js:7');
    assert.match(b.summary, /setting up connections: their cause is that requests to http:\/\/127\.0\.0\.1:7001 open a new connection/);
    assert.match(b.summary, /fetchStock, lib\/inventory\.js:7/);
  }
});

test("setupWorkOfChurn: TLS handshakes' crypto counts as set-up only for https calls", () => {
  const https = orderFindings(setupWorkOfChurn([blocking('crypto'), churn('https://127.0.0.1:7443')]));
  assert.equal(https[0].code, 'HOTPATH_OUTGOING_CONNECTION_CHURN');
  const plain = orderFindings(setupWorkOfChurn([blocking('crypto'), churn()]));
  assert.equal(plain[0].code, 'HOTPATH_EVENT_LOOP_BLOCKING', 'hashing beside plain-HTTP churn is the blocking of its own');
  assert.equal(plain[1].evidence.explains, undefined);
});

test('setupWorkOfChurn: other blocking work, an info churn note, or no churn leave the findings as they are', () => {
  for (const findings of [[blocking('regex'), churn()], [blocking('net'), churn(undefined, 'info')], [blocking('net')]]) {
    assert.deepEqual(setupWorkOfChurn(findings), findings);
  }
});
