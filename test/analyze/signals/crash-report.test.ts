// What a dead Node process printed about its death: the tails below are what Node 20 wrote to
// stderr in real runs (/tmp probes of 2026-11-28), cut to what matters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { frameFunction, parseCrash, parseFrame } from '../../../src/analyze/signals/crash-report.js';

const uncaught = [
  'listening',
  '/srv/app/server.js:5',
  "  if (n === 3000) throw new Error('boom on request 3000');",
  '                  ^',
  'Error: boom on request 3000',
  '    at Server.<anonymous> (/srv/app/server.js:5:25)',
  '    at Server.emit (node:events:524:28)',
  '    at parserOnIncoming (node:_http_server:1139:12)',
  'Node.js v20.20.2',
];

test('an uncaught exception: its error, its stack and where it was thrown', () => {
  const c = parseCrash(uncaught);
  assert.equal(c?.kind, 'uncaught-exception');
  assert.equal(c?.error, 'Error: boom on request 3000');
  assert.deepEqual(c?.thrownAt, { file: '/srv/app/server.js', line: 5 });
  assert.deepEqual(c?.frames[0], { function: '(anonymous)', file: '/srv/app/server.js', line: 5, column: 25 });
  assert.equal(c?.frames.length, 3);
});

test('an ESM server: file:// URLs in the header and the frames; a source line at column 0 is not the error', () => {
  const c = parseCrash([
    'file:///srv/app/server.mjs:9',
    "throw new TypeError('order id missing');",
    '^',
    'TypeError: order id missing',
    '    at parseOrder (file:///srv/app/server.mjs:9:7)',
    '    at async Server.handle [as onRequest] (file:///srv/app/server.mjs:14:15)',
    'Node.js v22.11.0',
  ]);
  assert.equal(c?.error, 'TypeError: order id missing');
  assert.equal(c?.thrownAt?.file, 'file:///srv/app/server.mjs');
  assert.deepEqual(
    c?.frames.map((f) => [f.function, f.line]),
    [
      ['parseOrder', 9],
      ['handle', 14],
    ],
  );
});

test('a rejection whose reason is no Error reads as an unhandled rejection, with no app location', () => {
  const c = parseCrash([
    'node:internal/process/promises:288',
    '            triggerUncaughtException(err, true /* fromPromise */);',
    '            ^',
    '[UnhandledPromiseRejection: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason "nope".] {',
    "  code: 'ERR_UNHANDLED_REJECTION'",
    '}',
    'Node.js v20.20.2',
  ]);
  assert.equal(c?.kind, 'unhandled-rejection');
  assert.match(c?.error ?? '', /^\[UnhandledPromiseRejection: .*"nope"\.\]$/);
  assert.equal(c?.thrownAt, undefined, "node's own file is not where the app threw");
  assert.deepEqual(c?.frames, []);
});

test("a heap out of memory is V8's fatal error, whatever the native stack under it", () => {
  const c = parseCrash([
    '<--- Last few GCs --->',
    '[2558:0xa87fca0]     1540 ms: Mark-Compact (reduce) 64.7 (68.3) -> 63.8 (66.3) MB',
    '<--- JS stacktrace --->',
    'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory',
    '----- Native stack trace -----',
    ' 1: 0xb78db3 node::OOMErrorHandler(char const*, v8::OOMDetails const&) [node]',
  ]);
  assert.equal(c?.kind, 'out-of-memory');
  assert.equal(c?.error, 'Reached heap limit Allocation failed - JavaScript heap out of memory');
});

test('the last error block wins over a handled error logged earlier with its stack', () => {
  const c = parseCrash(['Error: retrying', '    at retry (/srv/app/db.js:3:9)', ...uncaught.slice(1)]);
  assert.equal(c?.error, 'Error: boom on request 3000');
  assert.equal(c?.frames[0].file, '/srv/app/server.js');
});

test('an app that printed the error itself (no header): the last stack and the line above it', () => {
  const c = parseCrash([
    'fatal:',
    'RangeError: Invalid array length',
    '    at grow (/srv/app/lib/buf.js:12:3)',
    '    at /srv/app/server.js:8:5',
  ]);
  assert.equal(c?.kind, 'uncaught-exception');
  assert.equal(c?.error, 'RangeError: Invalid array length');
  assert.deepEqual(
    c?.frames.map((f) => `${f.function} ${f.line}`),
    ['grow 12', '(anonymous) 8'],
  );
});

test('a process.exit() or a log line says nothing of a crash', () => {
  assert.equal(parseCrash([]), undefined);
  assert.equal(parseCrash(['quota reached, bailing out']), undefined);
});

test('frame names as written: receivers, async, new and aliases dropped; eval frames have no file', () => {
  assert.equal(frameFunction('Object.<anonymous>'), '(anonymous)');
  assert.equal(frameFunction('async Router.handle [as next]'), 'handle');
  assert.equal(frameFunction('new Pool'), 'Pool');
  assert.equal(frameFunction(undefined), '(anonymous)');
  assert.equal(parseFrame('    at eval (eval at build (/srv/app/a.js:1:2), <anonymous>:1:1)'), undefined);
  assert.deepEqual(parseFrame('    at C:\\app\\server.js:3:4'), {
    function: '(anonymous)',
    file: 'C:\\app\\server.js',
    line: 3,
    column: 4,
  });
});
