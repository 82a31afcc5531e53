// A load whose responses were mostly redirects or errors, with nothing else found, measured those,
// not the app's work (probe round m: two servers whose `/` redirected to the route under test read
// healthy at 2,000-6,000 req/s). The finding is a warning, so such a run is never called healthy;
// an error path that is itself slow keeps its own finding alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeRun } from '../../src/analyze/analyze-run.js';
import { offTargetLoad, offTargetStatus, OFF_TARGET_MIN_RESPONSES } from '../../src/analyze/off-target-load.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import type { RunData } from '../../src/run-dir/run-data.js';
import type { Finding } from '../../src/analyze/finding.js';

/** The finding for this run when no other one was found. */
const alone = (run: RunData) => offTargetLoad(run, []);

/** A healthy-looking run (cheap requests, idle loop) whose load got these statuses, at this URL. */
function withStatuses(statusCodes: Record<string, number>, url = 'http://127.0.0.1:3000/', scenario?: number): RunData {
  const run = syntheticRun({ seed: 7, rps: 2000, elu: 0.3, cores: 0.3, latencyMs: 1 });
  const options = { ...run.load!.options, ...(scenario !== undefined ? { scenario } : {}) };
  return { ...run, load: { ...run.load!, url, options, statusCodes } };
}

test('off-target load: every response a redirect is a warning naming the status and the path, and the run is not healthy', () => {
  const run = withStatuses({ 302: 9796 });
  const f = alone(run)!;
  assert.equal(f.code, 'HOTPATH_LOAD_OFF_TARGET');
  assert.equal(f.category, 'off-target-load');
  assert.equal(f.severity, 'warning');
  assert.match(f.title, /^Every response of the load was a redirect \(302\)/);
  assert.match(f.summary, /Of 9,796 responses to `\/`, 9,796 × 302/);
  assert.match(f.recommendation, /redirected: point the load at the page it leads to \(`--path`/);
  assert.equal(f.evidence.offTargetShare, 1);
  assert.equal(f.evidence.topStatus, 302);
  const findings = analyzeRun(run);
  assert.ok(findings.some((x) => x.code === 'HOTPATH_LOAD_OFF_TARGET'));
  assert.ok(!findings.some((x) => x.code === 'HOTPATH_HEALTHY'), findings.map((x) => x.code).join());
});

test('off-target load: the same run answered 200 is healthy (the statuses alone decide)', () => {
  const run = withStatuses({ 200: 9796 });
  assert.equal(alone(run), undefined);
  assert.equal(analyzeRun(run)[0].code, 'HOTPATH_HEALTHY');
});

test('off-target load: a mix counts redirects and errors together, from half of the responses, and advises by the commonest', () => {
  const f = alone(withStatuses({ 200: 400, 404: 500, 500: 100 }, 'http://127.0.0.1:3000/api?x=1'))!;
  assert.equal(f.evidence.offTargetResponses, 600);
  assert.equal(f.evidence.offTargetShare, 0.6);
  assert.equal(f.evidence.path, '/api?x=1');
  assert.match(f.title, /^60 % of the responses of the load were client errors \(404\)/);
  assert.match(f.summary, /500 × 404, 100 × 500/);
  assert.match(f.recommendation, /`\/api\?x=1` found no route/);
  assert.equal(alone(withStatuses({ 200: 600, 404: 400 })), undefined, 'under half: a load that mostly reached the app');
});

test('off-target load: 304 is an answer, 401/429/5xx get their own advice, a scenario is named as such', () => {
  assert.equal(offTargetStatus('304'), false);
  assert.equal(offTargetStatus('301'), true);
  assert.equal(offTargetStatus('204'), false);
  assert.equal(alone(withStatuses({ 304: 5000 })), undefined);
  assert.match(alone(withStatuses({ 401: 5000 }))!.recommendation, /needed credentials/);
  assert.match(alone(withStatuses({ 429: 5000 }))!.recommendation, /rate limiter/);
  const err = alone(withStatuses({ 503: 5000 }, 'http://127.0.0.1:3000/', 3))!;
  assert.match(err.title, /was a server error \(503\)/);
  assert.match(err.recommendation, /^the scenario's 3 requests failed: the error is in the target's output/);
});

test('off-target load: too few responses to judge, or no load result, say nothing', () => {
  assert.equal(alone(withStatuses({ 302: OFF_TARGET_MIN_RESPONSES - 1 })), undefined);
  const { load: _load, ...noLoad } = withStatuses({ 302: 100 });
  assert.equal(alone(noLoad), undefined);
});

test("off-target load: an error path with a finding of its own (a validator backtracking before its 400) is the app's work: no off-target finding", () => {
  const run = withStatuses({ 400: 121 });
  const blocking: Finding = {
    code: 'HOTPATH_EVENT_LOOP_BLOCKING',
    category: 'event-loop-blocking',
    severity: 'critical',
    title: '/^(\\w+\\s?)*$/ blocks the event loop (regular expressions)',
    summary: '',
    evidence: { work: 'regex' },
    recommendation: '',
    impact: 0.9,
  };
  assert.equal(offTargetLoad(run, [blocking]), undefined);
  const info: Finding = { ...blocking, severity: 'info' };
  assert.equal(offTargetLoad(run, [info])?.code, 'HOTPATH_LOAD_OFF_TARGET', 'an info note does not stand in its way');
});

test('issue 18: a load that got no response at all (every connection reset) is said with its errors, never healthy', () => {
  const base = withStatuses({});
  const run: RunData = {
    ...base,
    load: {
      ...base.load!,
      requests: { ...base.load!.requests, total: 0, sent: 25355, perSecond: 0 },
      errors: { total: 25355, timeouts: 0, byCode: { EOF: 25355 }, parse: 0 },
    },
  };
  const f = alone(run)!;
  assert.equal(f.code, 'HOTPATH_LOAD_OFF_TARGET');
  assert.match(f.title, /^No request of the load got a response \(EOF 25,355\)/);
  assert.match(f.summary, /closed or reset each connection/);
  assert.equal(f.evidence.responses, 0);
  const all = analyzeRun(run);
  assert.ok(!all.some((x) => x.code === 'HOTPATH_HEALTHY'));
  // A load cut short (the target died) is its own finding's business; nothing sent, nothing said.
  assert.equal(alone({ ...run, load: { ...run.load!, stoppedEarly: { reason: 'interrupted' } } }), undefined);
  assert.equal(alone({ ...run, load: { ...run.load!, requests: { ...run.load!.requests, sent: 0 } } }), undefined);
});
