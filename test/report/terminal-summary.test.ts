import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDiagnosis, orderHotspots, evidenceFigures } from '../../src/report/terminal-summary.js';
import { styler } from '../../src/cli/io.js';
import type { Report, Hotspot } from '../../src/report/report-schema.js';
import type { Finding } from '../../src/analyze/finding.js';

const finding: Finding = {
  code: 'HOTPATH_SYNC_IO',
  category: 'sync-io',
  severity: 'critical',
  title: 'crypto.pbkdf2Sync blocks the event loop on the request path',
  summary: 'crypto.pbkdf2Sync ran 400 times while requests were in flight.',
  evidence: { api: 'crypto.pbkdf2Sync', calls: 400, perCallMs: 9.125, shareOfWindow: 0.73, nested: { a: 1 } },
  culprit: { function: 'login', file: 'app.js', line: 21, column: 33 },
  recommendation: 'Use the callback form (`crypto.pbkdf2`).\n\nMore detail.',
  impact: 0.73,
};
const hot = (fn: string, kind: string, selfShare: number): Hotspot => ({
  function: fn,
  file: kind === 'app' ? 'app.js' : 'node:internal/x',
  line: 3,
  kind,
  selfMs: selfShare * 1000,
  selfShare,
  totalMs: 0,
  totalShare: 0,
});
const report = {
  findings: [finding],
  hotspots: [hot('pbkdf2', 'native', 0.5), hot('login', 'app', 0.3), hot('parse', 'deps', 0.1)],
} as unknown as Report;

test('terminal: finding with culprit, evidence figures and every paragraph of the fix, plain without colour', () => {
  const text = formatDiagnosis(report, styler({ color: false }));
  assert.match(text, /✖ critical crypto\.pbkdf2Sync blocks the event loop/);
  assert.match(text, /culprit\s+login\s+app\.js:21:33/);
  assert.match(text, /evidence api crypto\.pbkdf2Sync · calls 400 · perCallMs 9\.1 · shareOfWindow 0\.73/);
  // Each paragraph starts its own line, under the first.
  assert.match(text, /\n  fix      Use the callback form \(crypto\.pbkdf2\)\.\n {11}More detail\.\n/);
  assert.doesNotMatch(text, /nested|\u001b\[/);
});

test('terminal: colour only when enabled', () => {
  assert.match(formatDiagnosis(report, styler({ color: true })), /\u001b\[31m/);
});

test('terminal: the hotspot table lists app code first', () => {
  assert.deepEqual(
    orderHotspots(report.hotspots, 3).map((h) => h.function),
    ['login', 'pbkdf2', 'parse'],
  );
  const table = formatDiagnosis(report, styler({ color: false })).split('Hotspots')[1];
  assert.ok(table.indexOf('login') < table.indexOf('pbkdf2'));
});

test('terminal: evidence figures skip arrays and objects', () => {
  assert.equal(evidenceFigures({ ...finding, evidence: { list: [1], obj: {}, n: 1234567 } }), 'n 1,234,567');
});

test('terminal: an infinite figure shows as ∞, and findings folded into this one are listed by category and title', () => {
  const merged: Finding = {
    ...finding,
    evidence: {
      growthRatio: 'Infinity',
      alsoFound: [
        { code: 'HOTPATH_BLOCKING', category: 'event-loop-blocking', title: 'login blocks the event loop', evidence: { share: 0.7 } },
      ],
    },
  };
  const text = formatDiagnosis({ ...report, findings: [merged] }, styler({ color: false }));
  assert.match(text, /evidence growthRatio ∞/);
  assert.match(text, /also\s+event-loop-blocking: login blocks the event loop/);
  assert.doesNotMatch(text, /"code"|\{/);
});

test('terminal: what the agent failed to do comes first, target processes marked, and agent frames are never hotspots', () => {
  const withErrors = {
    ...report,
    agentErrors: [
      { pid: 12, threadId: 0, what: 'hook:route-growth', message: "'app.router' is deprecated!", target: true },
      { pid: 11, threadId: 0, what: 'listen', message: 'boom', target: false },
    ],
    hotspots: [...report.hotspots, hot('captureStack', 'agent', 0.4)],
  } as Report;
  const text = formatDiagnosis(withErrors, styler({ color: false }));
  assert.match(
    text,
    /^Agent errors .*\n  ✖ hook:route-growth \(pid 12\): 'app\.router' is deprecated!\n  · listen \(pid 11, not a target\): boom\n/,
  );
  assert.ok(text.indexOf('Agent errors') < text.indexOf('Diagnosis'));
  assert.doesNotMatch(text, /captureStack/);
  assert.doesNotMatch(formatDiagnosis(report, styler({ color: false })), /Agent errors/);
});

test('terminal: a cost paid in one function and caused in another shows where it is paid and the path with calls per request', () => {
  const paid: Finding = {
    ...finding,
    code: 'HOTPATH_EVENT_LOOP_BLOCKING',
    category: 'event-loop-blocking',
    culprit: { function: 'buildMatcher', file: 'lib/matcher.js', line: 2 },
    evidence: {
      paidIn: { function: 'isFlagged', file: 'lib/matcher.js', line: 5 },
      callPath: [
        { function: 'moderate', file: 'server.js', line: 2, callsPerRequest: 1 },
        { function: 'isFlagged', file: 'lib/matcher.js', line: 4, callsPerRequest: 2531.4 },
      ],
    },
  };
  const text = formatDiagnosis({ ...report, findings: [paid] } as Report, styler({ color: false }));
  assert.match(text, /\n  paid in  isFlagged lib\/matcher\.js:5\n/);
  assert.match(text, /\n  path     moderate \(server\.js:2, 1\/req\) → isFlagged \(lib\/matcher\.js:4, 2,531\/req\)\n/);
  // The culprit itself paying: no "paid in" line; a path without counts still shows.
  const self = { ...paid, culprit: { function: 'isFlagged', file: 'lib/matcher.js', line: 4 } };
  self.evidence = {
    ...paid.evidence,
    callPath: [
      { function: 'moderate', file: 'server.js', line: 2 },
      { function: 'isFlagged', file: 'lib/matcher.js', line: 4 },
    ],
  };
  const plainText = formatDiagnosis({ ...report, findings: [self] } as Report, styler({ color: false }));
  assert.doesNotMatch(plainText, /paid in/);
  assert.match(plainText, /path {5}moderate \(server\.js:2\) → isFlagged \(lib\/matcher\.js:4\)/);
});
