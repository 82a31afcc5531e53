// specificWork: what a frame's name and file say it does, measured names on Node 20/22/24.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUFFER_COPIES, specificWork } from '../../src/profile/work-kind.js';
import type { Frame } from '../../src/profile/call-tree.js';

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
