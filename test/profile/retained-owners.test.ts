// retainedOwners: who keeps what a retained heap profile holds. On hand-built heap profiles
// (the shapes of the probes): bytes allocated under an app frame stay with it; bytes made with no
// app frame on the stack (node's HTTP parser, body-parser) go to the app code that ran in the same
// call and keeps objects itself, never across the event loop's task queues or the root; a module's
// top-level allocations go to the app code that loaded it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildHeapTree } from '../../src/profile/build-heap-tree.js';
import type { HeapProfile } from '../../src/profile/heap-profile.js';
import { retainedOwners } from '../../src/profile/retained-owners.js';

const cwd = '/srv/app';
interface Spec {
  name: string;
  file: string;
  line?: number;
  bytes?: number;
  children?: Spec[];
}

function tree(specs: Spec[]) {
  let id = 1;
  const url = (file: string) => (file === '' || file.startsWith('node:') ? file : `${cwd}/${file}`);
  const node = (s: Spec): HeapProfile['head'] => ({
    id: ++id,
    selfSize: s.bytes ?? 0,
    children: (s.children ?? []).map(node),
    callFrame: {
      functionName: s.name,
      scriptId: s.file === '' ? '0' : '7',
      url: url(s.file),
      lineNumber: (s.line ?? 1) - 1,
      columnNumber: 0,
    },
  });
  const head = {
    id: 1,
    selfSize: 0,
    children: specs.map(node),
    callFrame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
  };
  return buildHeapTree({ head }, { cwd, sourceMaps: false });
}

function owners(specs: Spec[]) {
  const t = tree(specs);
  const r = retainedOwners(t);
  const name = (f: number) => t.frames[f].name;
  return {
    ...r,
    by: Object.fromEntries(
      r.owners.map((o) => [
        name(o.frame),
        {
          bytes: o.bytes,
          allocated: o.allocated,
          stored: o.stored,
          loaded: o.loaded,
          module: o.module === undefined ? undefined : t.frames[o.module].file,
        },
      ]),
    ),
    unownedBy: Object.fromEntries(r.unowned.map((u) => [name(u.frame), u.storedBy === undefined ? null : name(u.storedBy)])),
  };
}

test("bytes allocated under an app frame, core work included, are that function's", () => {
  const r = owners([
    {
      name: 'emit',
      file: 'node:events',
      children: [
        { name: 'remember', file: 'lib/cache.js', line: 3, bytes: 60, children: [{ name: 'set', file: '', bytes: 20 }] },
        { name: 'render', file: 'lib/view.js', line: 9, bytes: 20 },
      ],
    },
  ]);
  assert.deepEqual(r.by.remember, { bytes: 80, allocated: 80, stored: 0, loaded: 0, module: undefined });
  assert.equal(r.by.render.bytes, 20);
  assert.equal(r.unownedBytes, 0);
  assert.equal(r.totalBytes, 100);
});

test('objects made with no app frame on the stack go to the app code that ran in the same call and keeps objects (a request log of headers and bodies)', () => {
  const r = owners([
    // node's HTTP parser makes the request (headers) before the handler runs, then calls it.
    {
      name: 'parserOnHeadersComplete',
      file: 'node:_http_common',
      bytes: 30,
      children: [
        { name: 'IncomingMessage', file: 'node:_http_incoming', bytes: 20 },
        { name: 'parserOnIncoming', file: 'node:_http_server', children: [{ name: 'handler', file: 'server.js', line: 4, bytes: 10 }] },
      ],
    },
    // body-parser's JSON.parse runs in its stream callback, which then calls the app's middleware.
    {
      name: 'processTicksAndRejections',
      file: 'node:internal/process/task_queues',
      children: [
        {
          name: 'onEnd',
          file: 'node_modules/body-parser/lib/read.js',
          children: [
            {
              name: 'parse',
              file: 'node_modules/body-parser/lib/types/json.js',
              bytes: 35,
              children: [{ name: 'logRequest', file: 'lib/log.js', line: 6, bytes: 5 }],
            },
          ],
        },
      ],
    },
  ]);
  assert.deepEqual(r.by.handler, { bytes: 60, allocated: 10, stored: 50, loaded: 0, module: undefined });
  assert.deepEqual(r.by.logRequest, { bytes: 40, allocated: 5, stored: 35, loaded: 0, module: undefined });
  assert.equal(r.unownedBytes, 85);
  assert.equal(r.unknownBytes, 0);
  assert.deepEqual(r.unownedBy, { parse: 'logRequest', parserOnHeadersComplete: 'handler', IncomingMessage: 'handler' });
  assert.equal(r.owners[0].frame, r.owners.find((o) => o.bytes === 60)!.frame, 'largest first');
});

test("no credit across the event loop's task queues or the root: unrelated work meets there", () => {
  const r = owners([
    { name: '(V8 API)', file: '', bytes: 15 },
    {
      name: 'processTicksAndRejections',
      file: 'node:internal/process/task_queues',
      children: [
        { name: 'emitCloseNT', file: 'node:net', bytes: 25 },
        { name: 'cacheResult', file: 'lib/cache.js', line: 2, bytes: 60 },
      ],
    },
  ]);
  assert.deepEqual(Object.keys(r.by), ['cacheResult']);
  assert.equal(r.by.cacheResult.bytes, 60);
  assert.equal(r.unknownBytes, 40);
  assert.deepEqual(r.unownedBy, { emitCloseNT: null, '(V8 API)': null });
});

test("a module's top-level allocations belong to the app code that loaded it (a module required again per request)", () => {
  const loader = (children: Spec[]): Spec => ({
    name: 'Module._load',
    file: 'node:internal/modules/cjs/loader',
    children: [{ name: 'Module._compile', file: 'node:internal/modules/cjs/loader', children }],
  });
  const r = owners([
    {
      name: 'handleRequest',
      file: 'node_modules/koa/lib/application.js',
      children: [
        {
          name: 'loadTemplates',
          file: 'lib/view.js',
          line: 3,
          bytes: 4,
          children: [
            loader([
              {
                name: '(anonymous)',
                file: 'lib/templates.js',
                line: 1,
                bytes: 80,
                children: [
                  { name: 'Function', file: '', bytes: 10 },
                  // A module the reloaded module requires at its top level: loaded by the same code in the end.
                  loader([{ name: '(anonymous)', file: 'lib/partials.js', line: 1, bytes: 6 }]),
                ],
              },
            ]),
          ],
        },
      ],
    },
  ]);
  assert.deepEqual(r.by.loadTemplates, { bytes: 100, allocated: 4, stored: 0, loaded: 96, module: 'lib/templates.js' });
  assert.equal(r.owners.length, 1);
});
