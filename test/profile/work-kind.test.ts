// specificWork: what a frame's name and file say it does, measured names on Node 20/22/24;
// workBreakdown: the work under an HTTP client frame is the client's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUFFER_COPIES, HTTP_CLIENT, specificWork } from '../../src/profile/work-kind.js';
import type { Frame } from '../../src/profile/call-tree.js';
import type { CpuProfile } from '../../src/profile/cpu-profile.js';
import { buildCallTree } from '../../src/profile/build-call-tree.js';
import { workBreakdown } from '../../src/profile/work-breakdown.js';
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
  const items = workBreakdown(tree, tree.frames.findIndex((f) => f.name === 'loadOrderLines')).items;
  const share = (label: string) => items.find((i) => i.label === label)?.share ?? 0;
  assert.equal(share(HTTP_CLIENT), 0.6);
  assert.equal(share('zlib compression'), 0.1);
  assert.equal(share('sockets'), 0.2, 'a socket write outside the client stays a socket write');
});
