// specificWork: what a frame's name and file say it does, measured names on Node 20/22/24;
// workBreakdown: the work under an HTTP client frame (or a child process's spawn) is the client's,
// and a dependency's own code is the dependency's, whatever core frame called it;
// inlineWorkOfLine: code compiled at run time is recognised on its line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUFFER_COPIES,
  CHILD_PROCESS,
  CLONE_LABEL,
  COMPILE_LABEL,
  FILE_READS,
  HTTP_CLIENT,
  IPC_LABEL,
  inlineWorkOfLine,
  SOURCE_MAPPED_STACKS,
  specificWork,
  ZLIB_ASYNC,
} from '../../src/profile/work-kind.js';
import type { Frame } from '../../src/profile/call-tree.js';
import type { CpuProfile } from '../../src/profile/cpu-profile.js';
import { buildCallTree } from '../../src/profile/build-call-tree.js';
import { workBreakdown, workTotals } from '../../src/profile/work-breakdown.js';
import { node } from './synthetic-profiles.js';

const frame = (name: string, file: string, kind: Frame['kind']): Frame => ({ name, file, line: 1, column: 1, kind });

test('buffer frames that copy or allocate are told apart from encoding', () => {
  for (const name of ['concat', '_copyActual', 'allocUnsafe', 'createUnsafeBuffer', 'FastBuffer']) {
    assert.equal(specificWork(frame(name, 'node:buffer', 'node-core'))?.label, BUFFER_COPIES, name);
  }
  assert.equal(specificWork(frame('copy', '', 'native'))?.label, BUFFER_COPIES);
  assert.equal(specificWork(frame('toString', 'node:buffer', 'node-core'))?.label, 'buffer/string encoding');
  assert.equal(specificWork(frame('utf8Write', '', 'native'))?.label, 'buffer/string encoding');
  assert.equal(specificWork(frame('concat', 'node:buffer', 'node-core'))?.work, 'buffer');
});

test('JSON, crypto and regex frames keep their labels', () => {
  assert.equal(specificWork(frame('JSON.parse', '', 'native'))?.label, 'JSON.parse');
  assert.equal(specificWork(frame('pbkdf2Sync', 'node:internal/crypto/pbkdf2', 'node-core'))?.label, 'PBKDF2 key derivation');
  assert.equal(specificWork(frame('RegExp: ^a+$', '', 'native'))?.work, 'regex');
});

test('whole-file reads through fs.promises are told apart from other file-system work', () => {
  // Node 20 and 24 both read fs.promises.readFile's chunks in readFileHandle, from the loop.
  assert.deepEqual(specificWork(frame('readFileHandle', 'node:internal/fs/promises', 'node-core')), { work: 'fs', label: FILE_READS });
  assert.equal(specificWork(frame('readFile', 'node:internal/fs/promises', 'node-core'))?.label, FILE_READS);
  assert.equal(specificWork(frame('writeFile', 'node:internal/fs/promises', 'node-core'))?.label, 'file system');
  assert.equal(specificWork(frame('readFileSync', 'node:fs', 'node-core'))?.label, 'file system');
  assert.equal(specificWork(frame('openSync', 'node:fs', 'node-core'))?.work, 'fs');
});

test('messages to and from worker threads are structured-clone work, framed or on the calling line', () => {
  // Measured on Node 20: Worker#postMessage's frame holds the serialization; a message received runs under messageport.
  assert.deepEqual(specificWork(frame('postMessage', 'node:internal/worker', 'node-core')), { work: 'clone', label: CLONE_LABEL });
  assert.equal(specificWork(frame('', 'node:internal/per_context/messageport', 'node-core'))?.work, 'clone');
  assert.equal(specificWork(frame('terminate', 'node:internal/worker', 'node-core'))?.work, undefined);
  for (const line of ['port.postMessage({ id, task });', 'const copy = structuredClone(order);', 'const buf = v8.serialize(state);']) {
    assert.equal(inlineWorkOfLine(line)?.work, 'clone', line);
  }
  assert.equal(inlineWorkOfLine('worker.postMessage(JSON.stringify(task));')?.label, 'JSON.stringify');
  assert.equal(inlineWorkOfLine('redis.serialize(value);'), undefined);
});

test('util.inspect and vm frames are named for what they do', () => {
  assert.equal(specificWork(frame('formatValue', 'node:internal/util/inspect', 'node-core'))?.work, 'inspect');
  assert.equal(specificWork(frame('runInNewContext', 'node:vm', 'node-core'))?.work, 'vm');
  assert.equal(specificWork(frame('createContext', 'node:vm', 'node-core'))?.label, 'vm contexts and scripts');
});

test('fetch, undici and node:http client frames are HTTP client work, with the sockets and streams they run', () => {
  assert.equal(specificWork(frame('fetch', 'node:internal/bootstrap/web/exposed-window-or-worker', 'node-core'))?.work, 'http-client');
  assert.equal(specificWork(frame('dispatch', 'node:internal/deps/undici/undici', 'node-core'))?.label, HTTP_CLIENT);
  assert.equal(specificWork(frame('ClientRequest', 'node:_http_client', 'node-core'))?.work, 'http-client');
  assert.equal(specificWork(frame('request', 'node:http', 'node-core'))?.work, 'http-client');
  assert.equal(specificWork(frame('createServer', 'node:http', 'node-core'))?.work, 'http');
  assert.equal(specificWork(frame('parserOnIncoming', 'node:_http_server', 'node-core'))?.work, 'http');

  const cwd = '/srv/app';
  const app = `file://${cwd}/lib/orders.js`;
  const undici = 'node:internal/deps/undici/undici';
  const profile: CpuProfile = {
    nodes: [
      node(1, '(root)', '', [2]),
      node(2, 'loadOrderLines', app, [3, 8], 6),
      node(3, 'fetch', 'node:internal/bootstrap/web/exposed-window-or-worker', [4], 90),
      node(4, 'dispatch', undici, [5, 6, 7], 700),
      node(5, 'writeGeneric', 'node:internal/stream_base_commons', [], 140),
      node(6, 'processChunk', 'node:zlib', [], 300),
      node(7, 'emit', 'node:events', [], 470),
      node(8, 'writeGeneric', 'node:internal/stream_base_commons', [], 140),
    ],
    startTime: 0,
    endTime: 10_000,
    // Under fetch: undici 2, its socket write 3, its event 1 (all the client's), its zlib 1; the app's own socket write 2; itself 1.
    samples: [4, 4, 5, 5, 5, 7, 6, 8, 8, 2],
    timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };
  const tree = buildCallTree(profile, { cwd });
  const items = workBreakdown(
    tree,
    tree.frames.findIndex((f) => f.name === 'loadOrderLines'),
  ).items;
  const share = (label: string) => items.find((i) => i.label === label)?.share ?? 0;
  assert.equal(share(HTTP_CLIENT), 0.6);
  assert.equal(share(ZLIB_ASYNC), 0.1, 'the response inflated by a stream: async zlib');
  assert.equal(share('sockets'), 0.2, 'a socket write outside the client stays a socket write');
});

test('child_process frames are child-process work, with the native spawn and the stdio pipes under them', () => {
  assert.equal(specificWork(frame('execFile', 'node:child_process', 'node-core'))?.work, 'child-process');
  assert.equal(specificWork(frame('ChildProcess.spawn', 'node:internal/child_process', 'node-core'))?.label, CHILD_PROCESS);

  // Measured on Node 20 (probe: execFile('git') per request): 58 % in the native spawn, 2 % creating the stdio sockets.
  const cwd = '/srv/app';
  const app = `file://${cwd}/lib/version.js`;
  const profile: CpuProfile = {
    nodes: [
      node(1, '(root)', '', [2]),
      node(2, 'currentVersion', app, [3], 5),
      node(3, 'execFile', 'node:child_process', [4], 328),
      node(4, 'ChildProcess.spawn', 'node:internal/child_process', [5, 6], 354),
      node(5, 'spawn', '', [], 0),
      node(6, 'Socket', 'node:net', [], 359),
    ],
    startTime: 0,
    endTime: 10_000,
    samples: [5, 5, 5, 5, 5, 5, 6, 6, 4, 2],
    timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };
  const tree = buildCallTree(profile, { cwd });
  const items = workBreakdown(
    tree,
    tree.frames.findIndex((f) => f.name === 'currentVersion'),
  ).items;
  assert.equal(items.find((i) => i.label === CHILD_PROCESS)?.share, 0.9);
  assert.equal(
    items.find((i) => i.label === 'native/V8'),
    undefined,
    "the native spawn is the child process's",
  );
});

test("issue 24: a cluster worker's connections arriving over IPC are IPC work, and the socket setup under them stays sockets", () => {
  // Frame names measured in the cluster-round-robin example's workers (Node 20): the hand-off is
  // read in channel.onread, parsed in parseChannelMessages, delivered by onconnection.
  for (const [name, file] of [
    ['channel.onread', 'node:internal/child_process'],
    ['parseChannelMessages', 'node:internal/child_process/serialization'],
    ['target._send', 'node:internal/child_process'],
    ['handleMessage', 'node:internal/child_process'],
    ['onconnection', 'node:internal/cluster/child'],
    ['onInternalMessage', 'node:internal/cluster/utils'],
  ]) {
    assert.deepEqual(specificWork(frame(name, file, 'node-core')), { work: 'ipc', label: IPC_LABEL }, name);
  }
  assert.equal(specificWork(frame('ChildProcess.spawn', 'node:internal/child_process', 'node-core'))?.label, CHILD_PROCESS);
  const cwd = '/srv/app';
  const app = `file://${cwd}/server.js`;
  const profile: CpuProfile = {
    nodes: [
      node(1, '(root)', '', [2]),
      node(2, 'channel.onread', 'node:internal/child_process', [3], 613),
      node(3, 'onconnection', 'node:internal/cluster/child', [4], 139),
      node(4, 'Socket', 'node:net', [5], 359),
      node(5, 'status', app, [], 17),
    ],
    startTime: 0,
    endTime: 10_000,
    samples: [2, 4, 4, 4, 4, 5, 5, 5, 5, 3],
    timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };
  const tree = buildCallTree(profile, { cwd });
  const totals = workTotals(tree);
  assert.equal(totals.get('child-process') ?? 0, 0, 'nothing was spawned');
  assert.ok((totals.get('ipc') ?? 0) > 0, JSON.stringify([...totals]));
  assert.ok((totals.get('net') ?? 0) > (totals.get('ipc') ?? 0), "the socket setup is the sockets' work");
});

test("a dependency run from a Node core event is the dependency's work, not the event's", () => {
  const cwd = '/srv/app';
  const bodyParser = `file://${cwd}/node_modules/body-parser/lib/types/json.js`;
  const profile: CpuProfile = {
    nodes: [
      node(1, '(root)', '', [2]),
      node(2, 'emit', 'node:events', [3], 471),
      node(3, 'parse', bodyParser, [4], 76),
      node(4, 'writeUtf8String', '', [], 0),
    ],
    startTime: 0,
    endTime: 4_000,
    samples: [3, 3, 3, 4],
    timeDeltas: [0, 1000, 1000, 1000],
  };
  const tree = buildCallTree(profile, { cwd, sourceMaps: false });
  // No app frame: each node charges itself; the parse is body-parser's, the native under it no event's either.
  assert.deepEqual([...workTotals(tree)].sort(), [
    ['deps', 3000],
    ['native', 1000],
  ]);
});

test('code compiled at run time is recognised on its line, not a method of the same name', () => {
  for (const line of [
    'const fn = new Function(`"use strict"; return (${rule.expr});`);',
    "return Function('a', 'b', body)(x, y);",
    'const value = eval(expression);',
    'const script = new vm.Script(source, { filename });',
    'const f = vm.compileFunction(code, params);',
    'const fn = new AsyncFunction("ctx", body);',
  ])
    assert.equal(inlineWorkOfLine(line)?.label, COMPILE_LABEL, line);
  for (const line of [
    'await redis.eval(script, 1, key);',
    'const f = makeFunction(x);',
    'function build(x) {',
    'typeof x === "function"',
  ]) {
    assert.notEqual(inlineWorkOfLine(line)?.work, 'compile', line);
  }
  // The compile, not the JSON a template writes into the code.
  assert.equal(inlineWorkOfLine('const fn = new Function(`return ${JSON.stringify(data)}`);')?.work, 'compile');
});

test('zlib frames are compression on the loop for the synchronous API and a hand-off for the async one (round w)', () => {
  assert.equal(specificWork(frame('processChunkSync', 'node:zlib', 'node-core'))?.label, 'zlib compression');
  assert.equal(specificWork(frame('syncBufferWrapper', 'node:zlib', 'node-core'))?.work, 'zlib');
  assert.equal(specificWork(frame('processChunk', 'node:zlib', 'node-core'))?.label, ZLIB_ASYNC);
  assert.equal(specificWork(frame('asyncBufferWrapper', 'node:zlib', 'node-core'))?.work, 'zlib-async');

  const cwd = '/srv/app';
  const app = `file://${cwd}/lib/gzip.js`;
  const writable = 'node:internal/streams/writable';
  const profile: CpuProfile = {
    nodes: [
      node(1, '(root)', '', [2, 7]),
      // zlib.gzip: the stream's end, the chunk handed to the pool by the handle's native write.
      node(2, 'gzipJson', app, [3]),
      node(3, 'asyncBufferWrapper', 'node:zlib', [4]),
      node(4, 'Writable.end', writable, [5]),
      node(5, 'processChunk', 'node:zlib', [6]),
      node(6, 'write', '', []),
      // zlib.gzipSync: the Gzip it builds and its deflate are its own compression.
      node(7, 'compressPage', app, [8]),
      node(8, 'syncBufferWrapper', 'node:zlib', [9, 11]),
      node(9, 'Gzip', 'node:zlib', [10]),
      node(10, 'Zlib', 'node:zlib', []),
      node(11, 'processChunkSync', 'node:zlib', [12]),
      node(12, 'writeSync', '', []),
    ],
    startTime: 0,
    endTime: 10_000,
    samples: [6, 6, 4, 3, 10, 12, 12, 12, 9, 2],
    timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };
  const tree = buildCallTree(profile, { cwd });
  const items = (name: string) =>
    workBreakdown(
      tree,
      tree.frames.findIndex((f) => f.name === name),
    ).items.map((i) => [i.label, i.share]);
  assert.deepEqual(items('gzipJson'), [
    [ZLIB_ASYNC, 0.8],
    ['own code', 0.2],
  ]);
  assert.deepEqual(items('compressPage'), [['zlib compression', 1]]);
  const totals = workTotals(tree);
  assert.deepEqual([totals.get('zlib'), totals.get('zlib-async')], [5000, 4000]);
});

test('Node mapping stack traces through source maps is Error work with its own label (round w)', () => {
  const mapped = specificWork(frame('prepareStackTraceWithSourceMaps', 'node:internal/source_map/prepare_stack_trace', 'node-core'));
  assert.deepEqual([mapped?.work, mapped?.label], ['errors', SOURCE_MAPPED_STACKS]);
  assert.equal(specificWork(frame('findSourceMap', 'node:internal/source_map/source_map_cache', 'node-core'))?.label, SOURCE_MAPPED_STACKS);
});

test('an HTTP client library the app calls issues the request: its own code is HTTP client work, a framework stays itself (round z)', () => {
  // Shaped on a Fastify route making one axios call per request (probe round z): the handler's
  // time was axios's config, headers and dispatch 55 %, node's client 22 %.
  const cwd = '/srv/app';
  const app = `file://${cwd}/server.js`;
  const fw = `file://${cwd}/node_modules/fastify/lib/route.js`;
  const axios = `file://${cwd}/node_modules/axios/lib/core/Axios.js`;
  const adapter = `file://${cwd}/node_modules/axios/lib/adapters/http.js`;
  const redirects = `file://${cwd}/node_modules/follow-redirects/index.js`;
  const profile: CpuProfile = {
    nodes: [
      node(1, '(root)', '', [2, 9]),
      node(2, 'routeHandler', fw, [3, 8], 10),
      node(3, 'getPrice', app, [4, 7], 9),
      node(4, 'request', axios, [5], 40),
      node(5, 'dispatchHttpRequest', adapter, [6], 200),
      node(6, 'RedirectableRequest', redirects, [10], 300),
      node(7, 'mergeConfig', `file://${cwd}/node_modules/axios/lib/core/mergeConfig.js`, [], 5),
      node(8, 'serialize', `file://${cwd}/node_modules/fast-json-stringify/index.js`, [], 70),
      node(9, 'format', `file://${cwd}/node_modules/dayjs/index.js`, [], 3),
      node(10, 'ClientRequest', 'node:_http_client', [], 80),
    ],
    startTime: 0,
    endTime: 10_000,
    // getPrice: axios 3 (request, mergeConfig, the adapter), follow-redirects 1, node's client 2, itself 1;
    // the framework 1 and its serializer 1 outside the handler; a dependency calling no client 1.
    samples: [4, 7, 5, 6, 10, 10, 3, 2, 8, 9],
    timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };
  const tree = buildCallTree(profile, { cwd });
  const of = (name: string) =>
    workBreakdown(
      tree,
      tree.frames.findIndex((f) => f.name === name),
    ).items;
  const items = of('getPrice');
  const share = (label: string) => items.find((i) => i.label === label)?.share ?? 0;
  assert.equal(share(`${HTTP_CLIENT} (axios)`), 3 / 7);
  assert.equal(share(`${HTTP_CLIENT} (follow-redirects)`), 1 / 7);
  assert.equal(share(HTTP_CLIENT), 2 / 7);
  assert.equal(items.filter((i) => i.work === 'http-client').length, 3);
  // The framework called the app: its own code is never the client's, nor a dependency that called no client.
  assert.deepEqual(
    of('routeHandler').map((i) => i.label),
    ['fastify'],
  );
  assert.deepEqual(
    of('format').map((i) => i.label),
    ['dayjs'],
  );
});
