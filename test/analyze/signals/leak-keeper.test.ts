import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { soleKeeper } from '../../../src/analyze/signals/leak-keeper.js';
import { syntheticRun } from '../../fixtures/telemetry/synthetic-run.js';
import type { FunctionRangeRow } from '../../../src/agent/profiling/function-ranges.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-keeper-'));
after(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'lib'));
mkdirSync(join(dir, 'node_modules', 'fw'), { recursive: true });
// An app whose request hook registers the framework's request objects; its handler stores into nothing.
writeFileSync(
  join(dir, 'server.js'),
  [
    "const { registerRequest } = require('./lib/registry.js');",
    'function onRequest(request) {',
    '  registerRequest(request);',
    '}',
    'function showOrder(request) {',
    '  const reply = { id: request.params.id };',
    '  reply.at = Date.now();',
    '  return reply;',
    '}',
    'class Pool {',
    '  give(c) {',
    '    this.free.push(c);',
    '  }',
    '}',
  ].join('\n'),
);
writeFileSync(
  join(dir, 'lib', 'registry.js'),
  [
    'const active = new Map();',
    'function registerRequest(request) {',
    '  active.set(request.id, request);',
    '}',
    'const seen = [];',
    'function remember(x) {',
    '  seen.push(x);',
    '}',
  ].join('\n'),
);
// A dependency that stores is not the app's.
writeFileSync(
  join(dir, 'node_modules', 'fw', 'index.js'),
  ['const routes = new Map();', 'function route(r) {', '  routes.set(r.path, r);', '}'].join('\n'),
);

const row = (name: string, line: number, calls: number): FunctionRangeRow => [name, line - 1, 0, line + 2, 1, calls];

function runWith(scripts: Record<string, FunctionRangeRow[]>) {
  const run = syntheticRun({ durationS: 5 });
  run.cwd = dir;
  const url = (f: string) => pathToFileURL(join(dir, f)).href;
  run.callCounts = [
    {
      pid: run.threads[0].pid,
      threadId: run.threads[0].threadId,
      start: run.load!.end - 500,
      end: run.load!.end,
      scripts: Object.fromEntries(Object.entries(scripts).map(([f, rows]) => [url(f), rows])),
    },
  ];
  return run;
}

test('leak keeper: of the app functions that ran, the only one storing into a long-lived collection is named, with its holder', () => {
  const k = soleKeeper(
    runWith({
      'server.js': [row('onRequest', 2, 40), row('showOrder', 5, 40), row('give', 11, 3)],
      'lib/registry.js': [row('registerRequest', 2, 40)],
      'node_modules/fw/index.js': [row('route', 2, 40)],
    }),
  );
  assert.ok(k);
  assert.deepEqual([k.culprit.function, k.culprit.file, k.culprit.line], ['registerRequest', 'lib/registry.js', 2]);
  assert.deepEqual([k.holder.name, k.holder.kind, k.holder.scope], ['active', 'Map', 'module']);
  // `this.free.push` (an object's property: a pool, a buffer list) is not counted as a keeper.
  assert.equal(k.candidates, 4);
});

test('leak keeper: two app functions that store, or none, or functions not called: nobody is named', () => {
  assert.equal(
    soleKeeper(
      runWith({ 'lib/registry.js': [row('registerRequest', 2, 40), row('remember', 6, 40)], 'server.js': [row('onRequest', 2, 40)] }),
    ),
    undefined,
  );
  assert.equal(soleKeeper(runWith({ 'server.js': [row('onRequest', 2, 40), row('showOrder', 5, 40)] })), undefined);
  assert.equal(soleKeeper(runWith({ 'lib/registry.js': [row('registerRequest', 2, 0)] })), undefined);
});

test('leak keeper: a leak whose heap profile names no app function gets the keeper as culprit, said as found in the source', async () => {
  const { memoryLeak } = await import('../../../src/analyze/memory-leak.js');
  const run = runWith({
    'server.js': [row('onRequest', 2, 40), row('showOrder', 5, 40)],
    'lib/registry.js': [row('registerRequest', 2, 40)],
  });
  // The post-load GC kept 8 MB more than the middle of the load, which kept 8 MB more than the start.
  const [thread] = run.threads;
  const mb = (x: number) => x * 1024 * 1024;
  const mid = thread.samples.find((s) => s.t >= run.load!.start + 2500)!;
  mid.gc = { observedMs: 0, full: 1, heapAfterFull: [{ t: mid.t, bytes: mb(28) }] };
  const first = thread.samples.find((s) => s.t >= run.load!.start + 200)!;
  first.gc = { observedMs: 0, full: 1, heapAfterFull: [{ t: first.t, bytes: mb(20) }] };
  const last = thread.samples[thread.samples.length - 1];
  thread.samples.push({ ...last, t: run.load!.end + 400, postLoadGc: { gcMs: 10, heapAfter: mb(36) } });
  const [f] = memoryLeak(run);
  assert.equal(f?.code, 'HOTPATH_MEMORY_LEAK');
  assert.deepEqual([f.culprit?.function, f.culprit?.file], ['registerRequest', 'lib/registry.js']);
  assert.equal(f.evidence.keptBy, 'source');
  assert.match(f.summary, /only `registerRequest` \(lib\/registry\.js:2\) stores into a collection that outlives the call/);
  assert.match(f.summary, /most likely kept in `active`, a Map declared at the module's top level/);
});
