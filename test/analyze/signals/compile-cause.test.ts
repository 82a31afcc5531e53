import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventLoopBlocking } from '../../../src/analyze/event-loop-blocking.js';
import { syntheticRun } from '../../fixtures/telemetry/synthetic-run.js';
import { syntheticCpuProfile } from '../../fixtures/telemetry/synthetic-profile.js';

function appDir(files: Record<string, string[]>): string {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-compile-'));
  for (const [path, lines] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), lines.join('\n'));
  }
  return dir;
}

const SERVER = [
  "const { buildMatcher, isFlagged } = require('./lib/matcher');",
  'function moderate(req, res) {',
  '  const matcher = buildMatcher(blockedWords(req));',
  '  res.end(String(isFlagged(req.body, matcher)));',
  '}',
];

/**
 * V8 compiles the pattern at its first exec: the samples fall on isFlagged's `.test()` line, a few
 * on the builder. With `native`, most of isFlagged's time is in the pattern's `RegExp:` frame instead.
 */
function blockingOf(dir: string, calls?: { moderate: number; buildMatcher: number; isFlagged: number }, native = false) {
  const profile = syntheticCpuProfile(
    [
      { name: 'moderate', file: 'server.js', line: 2, share: 0.05 },
      { name: 'buildMatcher', file: 'lib/matcher.js', line: 1, share: 0.03, calledBy: 'moderate' },
      {
        name: 'isFlagged',
        file: 'lib/matcher.js',
        line: 4,
        share: native ? 0.1 : 0.6,
        calledBy: 'moderate',
        hotLine: 5,
        ...(native ? { callee: { name: 'RegExp: \\b(?:a|b)\\b', file: '', share: 0.5 } } : {}),
      },
    ],
    { cwd: dir },
  );
  const run = syntheticRun({ cwd: dir, rps: 400, elu: 0.95, cores: 0.95, latencyMs: 20, profiles: [profile] });
  if (calls) {
    const t = run.threads[0];
    const start = run.loadWindow!.start + 4000;
    run.meta.callCountWindow = { from: start, until: start + 2000, requests: 800 };
    run.callCounts = [
      {
        pid: t.pid,
        threadId: t.threadId,
        start,
        end: start + 2000,
        scripts: {
          [`file://${join(dir, 'server.js')}`]: [['moderate', 1, 0, 4, 1, 800 * calls.moderate]],
          [`file://${join(dir, 'lib/matcher.js')}`]: [
            ['buildMatcher', 0, 0, 2, 1, 800 * calls.buildMatcher],
            ['isFlagged', 3, 0, 5, 1, 800 * calls.isFlagged],
          ],
        },
      },
    ];
  }
  return eventLoopBlocking(run)[0];
}

test('compile cause: a pattern built per call by one function and first tested by another is paid in the tester and caused by the builder', () => {
  const dir = appDir({
    'server.js': SERVER,
    'lib/matcher.js': [
      'function buildMatcher(words) {',
      "  return new RegExp('\\\\b(?:' + words.join('|') + ')\\\\b', 'i');",
      '}',
      'function isFlagged(text, matcher) {',
      '  return matcher.test(text);',
      '}',
    ],
  });
  const f = blockingOf(dir, { moderate: 1, buildMatcher: 1, isFlagged: 1 });
  assert.deepEqual(f.culprit, { function: 'buildMatcher', file: 'lib/matcher.js', line: 2 });
  assert.deepEqual(f.evidence.paidIn, { function: 'isFlagged', file: 'lib/matcher.js', line: 5 });
  assert.deepEqual(f.evidence.builtVia, { function: 'moderate', file: 'server.js', line: 3 });
  assert.equal(f.evidence.compiled, 'regexp');
  assert.equal(f.evidence.builderCallsPerRequest, 1);
  assert.deepEqual(f.evidence.callPath, [
    { function: 'moderate', file: 'server.js', line: 2, callsPerRequest: 1 },
    { function: 'isFlagged', file: 'lib/matcher.js', line: 4, callsPerRequest: 1 },
  ]);
  assert.match(
    f.summary,
    /The regular expression used at lib\/matcher\.js:5 is built anew on every call by buildMatcher \(lib\/matcher\.js:2, called at server\.js:3 in moderate, 1 per request\).*paid in isFlagged, and caused by buildMatcher\. Path: moderate \(server\.js:2, 1 per request\) → isFlagged \(lib\/matcher\.js:4, 1 per request\)/,
  );
  // Without call counts the builder is still named, with no calls per request.
  const uncounted = blockingOf(dir);
  assert.equal(uncounted.culprit?.function, 'buildMatcher');
  assert.equal(uncounted.evidence.builderCallsPerRequest, undefined);
  // The pattern's time in its own RegExp: frame is native code V8 tiered up: its execution, not a compile.
  const running = blockingOf(dir, undefined, true);
  assert.equal(running.culprit?.function, 'isFlagged');
  assert.equal(running.evidence.builtBy, undefined);
  rmSync(dir, { recursive: true, force: true });
});

test('compile cause: a builder that caches its pattern, or a pattern built where it is used, keeps the payer as the culprit', () => {
  const memoized = [
    "  const key = words.join('|'); let re = patterns.get(key); if (!re) patterns.set(key, (re = new RegExp(key)));",
    "  return patterns[words] || (patterns[words] = new RegExp(words.join('|')));",
    "  return (patterns[words] ??= new RegExp(words.join('|')));",
    "  if (!pattern) pattern = new RegExp(words.join('|')); return pattern;",
  ];
  for (const line of memoized) {
    const cached = appDir({
      'server.js': SERVER,
      'lib/matcher.js': [
        'function buildMatcher(words) {',
        line,
        '}',
        'function isFlagged(text, matcher) {',
        '  return matcher.test(text);',
        '}',
      ],
    });
    const c = blockingOf(cached);
    assert.equal(c.culprit?.function, 'isFlagged', line);
    assert.equal(c.evidence.builtBy, undefined, line);
    rmSync(cached, { recursive: true, force: true });
  }
  const inPlace = appDir({
    'server.js': SERVER,
    'lib/matcher.js': [
      'function buildMatcher(words) {',
      '  return words;',
      '}',
      'function isFlagged(text, words) {',
      "  return new RegExp(words.join('|')).test(text);",
      '}',
    ],
  });
  const p = blockingOf(inPlace);
  assert.equal(p.culprit?.function, 'isFlagged');
  assert.equal(p.evidence.builtBy, undefined);
  rmSync(inPlace, { recursive: true, force: true });
});

test('compile cause: a template function compiled per call by a helper and first called by the renderer names the helper', () => {
  const dir = appDir({
    'server.js': SERVER,
    'lib/matcher.js': [
      'function buildMatcher(src) {',
      "  return new Function('return function render(d) { return ' + src + '; }')();",
      '}',
      'function isFlagged(src, data) {',
      '  const render = buildMatcher(src); return render(data);',
      '}',
    ],
  });
  const f = blockingOf(dir);
  assert.deepEqual(f.culprit, { function: 'buildMatcher', file: 'lib/matcher.js', line: 2 });
  assert.equal(f.evidence.compiled, 'function');
  assert.deepEqual(f.evidence.builtVia, { function: 'isFlagged', file: 'lib/matcher.js', line: 5 });
  assert.match(f.summary, /The function used at lib\/matcher\.js:5 is built anew on every call by buildMatcher/);
  rmSync(dir, { recursive: true, force: true });
});

test('compile cause: a template compiled in two places (the builder, and its first call in the renderer), neither 20 % alone, is blocking together', () => {
  const files = (cached: boolean) => ({
    'server.js': [
      "const { compileView, renderPage } = require('./lib/views');",
      'function productPage(req, res) {',
      '  const view = compileView(layoutFor(req));',
      '  res.end(renderPage(view, req.query));',
      '}',
    ],
    'lib/views.js': [
      'function compileView(src) {',
      cached ? '  return views.get(src);' : '  const code = toCode(src);',
      "  return new Function('return function render(d) { ' + code + ' }')();",
      '}',
      'function renderPage(view, data) {',
      '  return view(data);',
      '}',
    ],
  });
  // 0.24 ms per request: below the focused rule's 0.3 ms, and each place holds 14 % of the CPU.
  const blocking = (dir: string) =>
    eventLoopBlocking(
      syntheticRun({
        cwd: dir,
        rps: 4000,
        elu: 0.95,
        cores: 0.95,
        latencyMs: 2,
        profiles: [
          syntheticCpuProfile(
            [
              { name: 'productPage', file: 'server.js', line: 2, share: 0.3 },
              { name: 'compileView', file: 'lib/views.js', line: 1, share: 0.14, calledBy: 'productPage', hotLine: 3 },
              { name: 'renderPage', file: 'lib/views.js', line: 5, share: 0.14, calledBy: 'productPage', hotLine: 6 },
            ],
            { cwd: dir },
          ),
        ],
      }),
    );
  const dir = appDir(files(false));
  const [f] = blocking(dir);
  assert.ok(f, 'a finding');
  assert.deepEqual(f.culprit, { function: 'compileView', file: 'lib/views.js', line: 3 });
  assert.deepEqual(f.evidence.paidIn, { function: 'renderPage', file: 'lib/views.js', line: 6 });
  assert.equal(f.evidence.work, 'compile');
  const share = f.evidence.compilePairShare as number;
  assert.ok(share >= 0.2 && share < 0.4, `pair share ${share}`);
  assert.match(f.summary, /Building it and its first use together take \d+ % of the CPU, none alone 20 %/);
  rmSync(dir, { recursive: true, force: true });
  // The builder caches its views: nothing is compiled per request, and 0.24 ms per request is not blocking.
  const control = appDir(files(true));
  assert.deepEqual(blocking(control), []);
  rmSync(control, { recursive: true, force: true });
});

test('compile cause: a class whose constructor builds the pattern, made per request and tested by a method, names the constructor and where it is made', () => {
  const files = (perRequest: boolean) => ({
    'server.js': [
      "const { Highlighter } = require('./lib/highlighter');",
      perRequest ? 'function page(req, res) {' : 'const shared = new Highlighter(terms); function page(req, res) {',
      perRequest ? '  const h = new Highlighter(termsOf(req));' : '  const h = shared;',
      '  res.end(h.mark(req.body));',
      '}',
    ],
    'lib/highlighter.js': [
      'class Highlighter {',
      '  constructor(terms) {',
      "    this.pattern = new RegExp(terms.join('|'), 'g');",
      '  }',
      '  mark(text) {',
      "    return text.replace(this.pattern, '<mark>$&</mark>');",
      '  }',
      '}',
    ],
  });
  const blocking = (dir: string) =>
    eventLoopBlocking(
      syntheticRun({
        cwd: dir,
        rps: 400,
        elu: 0.95,
        cores: 0.95,
        latencyMs: 20,
        profiles: [
          syntheticCpuProfile(
            [
              { name: 'page', file: 'server.js', line: 2, share: 0.05 },
              { name: 'mark', file: 'lib/highlighter.js', line: 5, share: 0.6, calledBy: 'page', hotLine: 6 },
            ],
            { cwd: dir },
          ),
        ],
      }),
    )[0];
  const dir = appDir(files(true));
  const f = blocking(dir);
  assert.deepEqual(f.culprit, { function: 'Highlighter', file: 'lib/highlighter.js', line: 3 });
  assert.deepEqual(f.evidence.paidIn, { function: 'mark', file: 'lib/highlighter.js', line: 6 });
  assert.deepEqual(f.evidence.builtVia, { function: 'page', file: 'server.js', line: 3 });
  assert.equal(f.evidence.work, 'regex');
  rmSync(dir, { recursive: true, force: true });
  // One instance made at start-up: its pattern is compiled once, the method that runs it stays the culprit.
  const once = appDir(files(false));
  const g = blocking(once);
  assert.equal(g.culprit?.function, 'mark');
  assert.equal(g.evidence.builtBy, undefined);
  rmSync(once, { recursive: true, force: true });
});
