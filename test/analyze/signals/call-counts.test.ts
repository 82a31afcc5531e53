import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  callCountShortfall,
  callsPerRequest,
  countsTrusted,
  describePath,
  describePerRequest,
  requestsAtTime,
  requestsInWindow,
} from '../../../src/analyze/signals/call-counts.js';
import { syntheticRun } from '../../fixtures/telemetry/synthetic-run.js';

test('call counts: requests in a window are interpolated between telemetry samples', () => {
  const series = { t: [1000, 1100, 1200], cumulative: [10, 30, 40] };
  assert.equal(requestsAtTime(series, 900), 0);
  assert.equal(requestsAtTime(series, 1000), 10);
  assert.equal(requestsAtTime(series, 1050), 20);
  assert.equal(requestsAtTime(series, 1150), 35);
  assert.equal(requestsAtTime(series, 5000), 40);
});

test('call counts: calls per request of a function, found by position or, source-mapped, by its unique name', () => {
  const cwd = '/srv/app';
  const run = syntheticRun({ cwd, rps: 500, elu: 0.5, cores: 0.5, latencyMs: 2 });
  const t = run.threads[0];
  const start = run.loadWindow!.start + 5000;
  // Rows as the agent writes them (captured from a koa app: name, 0-based start line and column, end, calls).
  run.callCounts = [
    {
      pid: t.pid,
      threadId: t.threadId,
      start,
      end: start + 500,
      scripts: {
        'file:///srv/app/lib/discounts.js': [
          ['evaluateRule', 17, 0, 25, 1, 1000],
          ['computeDiscount', 27, 0, 36, 1, 250],
        ],
        'file:///srv/app/server.js': [['', 10, 8, 17, 1, 250]],
      },
    },
  ];
  const requests = requestsInWindow(t, run.callCounts[0]);
  assert.ok(requests > 200 && requests < 300, `requests ${requests}`);
  const rule = callsPerRequest(run, { name: 'evaluateRule', file: 'lib/discounts.js', line: 18, column: 1 });
  assert.equal(rule?.calls, 1000);
  assert.ok(rule!.perRequest > 3.3 && rule!.perRequest < 5, `per request ${rule?.perRequest}`);
  // An anonymous handler by its position.
  assert.equal(callsPerRequest(run, { name: '(anonymous)', file: 'server.js', line: 11, column: 9 })?.calls, 250);
  // A source-mapped frame whose line lands elsewhere: its unique name in the script.
  assert.equal(callsPerRequest(run, { name: 'computeDiscount', file: 'lib/discounts.js', line: 3, column: 1 })?.calls, 250);
  // Unknown function, unknown script, no counts.
  assert.equal(callsPerRequest(run, { name: 'other', file: 'lib/discounts.js', line: 3, column: 1 }), undefined);
  assert.equal(callsPerRequest(run, { name: 'evaluateRule', file: 'lib/else.js', line: 18, column: 1 }), undefined);
  delete run.callCounts;
  assert.equal(callsPerRequest(run, { name: 'evaluateRule', file: 'lib/discounts.js', line: 18, column: 1 }), undefined);
});

test('call counts: a window with too few requests tells nothing', () => {
  const run = syntheticRun({ cwd: '/srv/app', rps: 4, elu: 0.5, cores: 0.5, latencyMs: 2 });
  const t = run.threads[0];
  const start = run.loadWindow!.start + 5000;
  run.callCounts = [
    { pid: t.pid, threadId: t.threadId, start, end: start + 500, scripts: { 'file:///srv/app/a.js': [['f', 0, 0, 3, 1, 90]] } },
  ];
  assert.equal(callsPerRequest(run, { name: 'f', file: 'a.js', line: 1, column: 1 }), undefined);
});

test('call counts: a window where every function read one call while many requests finished was not counted, and the finding says so', () => {
  // What V8 answers once another inspector session disabled the Profiler domain in the window
  // (best-effort coverage: 1 for whatever ran); captured from slugify-per-item beside a CPU hog.
  const run = syntheticRun({ cwd: '/srv/app', rps: 40, elu: 0.9, cores: 0.9, latencyMs: 200 });
  const t = run.threads[0];
  const start = run.loadWindow!.start + 5000;
  const window = (search: number, slugify: number) => ({
    pid: t.pid,
    threadId: t.threadId,
    start,
    end: start + 500,
    scripts: {
      'file:///srv/app/lib/catalog.js': [['search', 5, 0, 12, 1, search] as [string, number, number, number, number, number]],
      'file:///srv/app/lib/slug.js': [['slugify', 1, 0, 3, 1, slugify] as [string, number, number, number, number, number]],
    },
  });
  run.meta.callCountWindow = { from: start, until: start + 500, requests: 20 };
  const search = { name: 'search', file: 'lib/catalog.js', line: 6, column: 1 };
  run.callCounts = [window(1, 1)];
  const requests = requestsInWindow(t, run.callCounts[0]);
  assert.ok(requests >= 15 && requests <= 25, `requests ${requests}`);
  assert.equal(countsTrusted(run.callCounts[0], requests), false);
  assert.equal(callsPerRequest(run, search), undefined);
  assert.match(
    callCountShortfall(run) ?? '',
    /every function of the app read one call while 20 requests finished \(V8 stopped counting in it\)/,
  );
  // Counted: 3,000 slugify calls per search.
  run.callCounts = [window(20, 60_000)];
  assert.equal(countsTrusted(run.callCounts[0], requests), true);
  assert.equal(callsPerRequest(run, search)?.calls, 20);
  assert.equal(callCountShortfall(run), undefined);
  // One call each in a window of two requests is what a starved target gives: counted, too few requests.
  assert.equal(countsTrusted(window(1, 1), 2), true);
  // Both threads' windows: the untrusted one is left out, the other still tells.
  const other = { ...window(1, 1), threadId: t.threadId + 1 };
  run.threads.push({ ...t, threadId: t.threadId + 1 });
  run.callCounts = [window(20, 60_000), other];
  assert.equal(callsPerRequest(run, search)?.calls, 20);
});

test('call counts: calls per request and paths as sentences', () => {
  assert.equal(describePerRequest(5992.4), '5,992');
  assert.equal(describePerRequest(11.4), '11');
  assert.equal(describePerRequest(1.06), '1.1');
  assert.equal(
    describePath([
      { function: 'handler', file: 'server.js', line: 3, callsPerRequest: 1 },
      { function: 'slugify', file: 'lib/slug.js', line: 1, callsPerRequest: 3000 },
      { function: 'other', file: 'lib/o.js', line: 9 },
    ]),
    'handler (server.js:3, 1 per request) → slugify (lib/slug.js:1, 3,000 per request) → other (lib/o.js:9)',
  );
});

test('call counts: async functions and generators get none (V8 counts each resumption as a call)', async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const cwd = mkdtempSync(join(tmpdir(), 'hotpath-calls-'));
  writeFileSync(
    join(cwd, 'server.mjs'),
    [
      'async function fetchPrice(base, sku) {',
      '  const r = await fetch(`${base}/price/${sku}`);',
      '  return (await r.json()).price;',
      '}',
      'function price(x) { return x * 2; }',
      'class Repo { async find(id) { return id; } }',
      'function* rows() { yield 1; }',
    ].join('\n'),
  );
  const run = syntheticRun({ cwd, rps: 500, elu: 0.5, cores: 0.5, latencyMs: 2 });
  const t = run.threads[0];
  const start = run.loadWindow!.start + 5000;
  const url = `file://${join(cwd, 'server.mjs')}`;
  // Counts as V8 gave them for a fetch helper: three entries per call.
  run.callCounts = [
    {
      pid: t.pid,
      threadId: t.threadId,
      start,
      end: start + 500,
      scripts: {
        [url]: [
          ['fetchPrice', 0, 0, 3, 1, 750],
          ['price', 4, 0, 4, 38, 250],
          ['find', 5, 13, 5, 42, 90],
          ['rows', 6, 0, 6, 30, 10],
        ],
      },
    },
  ];
  assert.equal(callsPerRequest(run, { name: 'fetchPrice', file: 'server.mjs', line: 1, column: 1 }), undefined);
  assert.equal(callsPerRequest(run, { name: 'find', file: 'server.mjs', line: 6, column: 20 }), undefined);
  assert.equal(callsPerRequest(run, { name: 'rows', file: 'server.mjs', line: 7, column: 1 }), undefined);
  assert.equal(callsPerRequest(run, { name: 'price', file: 'server.mjs', line: 5, column: 1 })?.calls, 250);
  rmSync(cwd, { recursive: true, force: true });
});
