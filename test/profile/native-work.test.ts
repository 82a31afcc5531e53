// Work labels of the native frames perf names (run --native, import): zlib, crypto, JSON, GC
// phases and the socket write path, inherited by the frames below them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { specificWork, genericWork, SOCKET_WRITE_PATH } from '../../src/profile/work-kind.js';
import type { Frame } from '../../src/profile/call-tree.js';
import { classifyFrame } from '../../src/profile/classify-frame.js';

const native = (name: string): Frame => ({ name, file: '', line: 0, column: 0, kind: classifyFrame(name, '', '0', { cwd: '/app' }) });

test('C, C++ and kernel symbols name their work', () => {
  const cases: [string, string | undefined][] = [
    ['longest_match', 'zlib compression'],
    ['node::(anonymous namespace)::ZlibContext::DoThreadPoolWork', 'zlib compression'],
    ['PKCS5_PBKDF2_HMAC', 'PBKDF2 key derivation'],
    ['sha256_block_data_order_avx2', 'hashing'],
    ['aesni_gcm_encrypt', 'encryption'],
    ['v8::internal::JsonParser<unsigned char>::ParseJsonValue', 'JSON.parse'],
    ['v8::internal::JsonStringifier::Serialize_<false>', 'JSON.stringify'],
    ['v8::internal::ScavengerCollector::CollectGarbage', 'garbage collection (scavenge: young generation)'],
    ['v8::internal::MarkCompactCollector::MarkLiveObjects', 'garbage collection (mark-compact: old generation)'],
    ['v8::internal::Heap::CollectGarbage', 'garbage collection'],
    ['node::StreamBase::Writev', SOCKET_WRITE_PATH],
    ['tcp_sendmsg_locked [kernel]', SOCKET_WRITE_PATH],
    ['sock_sendmsg [kernel]', SOCKET_WRITE_PATH],
    ['uv_run', undefined],
    ['v8::internal::Invoke', undefined],
  ];
  for (const [name, label] of cases) assert.equal(specificWork(native(name))?.label, label, name);
  // The kernel is a layer (frame kind) and a work kind of its own.
  assert.equal(native('_raw_spin_lock [kernel]').kind, 'kernel');
  assert.deepEqual(genericWork(native('_raw_spin_lock [kernel]')), { work: 'kernel', label: 'kernel' });
  assert.equal(native('uv_run').kind, 'native');
  assert.equal(genericWork(native('uv_run')).label, 'native/V8');
});
