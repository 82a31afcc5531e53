// Where load goes, from an agent's listen report: wildcard binds over loopback, IPv6 in
// brackets, Unix sockets through their path.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ListenMessage } from '../../src/agent/protocol.js';
import { targetAddress } from '../../src/run/target-address.js';

const listen = (over: Partial<ListenMessage>): ListenMessage => ({ v: 1, pid: 1, threadId: 0, t: 0, type: 'listen', address: '127.0.0.1', ...over });

test('wildcard binds are reached over 127.0.0.1', () => {
  assert.equal(targetAddress(listen({ address: '::', port: 3000 }), '/api?x=1').url, 'http://127.0.0.1:3000/api?x=1');
  assert.equal(targetAddress(listen({ address: '0.0.0.0', port: 80 }), '/').url, 'http://127.0.0.1:80/');
});

test('IPv6 loopback is bracketed; a path without a slash gets one', () => {
  const a = targetAddress(listen({ address: '::1', port: 8080 }), 'health');
  assert.equal(a.url, 'http://[::1]:8080/health');
  assert.equal(a.label, '[::1]:8080');
});

test('a Unix socket server is reached through its path', () => {
  const a = targetAddress(listen({ address: '/tmp/app.sock', pipe: '/tmp/app.sock' }), '/x');
  assert.deepEqual(a, { url: 'http://localhost/x', socket: '/tmp/app.sock', label: '/tmp/app.sock' });
});
