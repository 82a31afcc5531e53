// Where load goes, from an agent's listen report: wildcard binds over loopback, IPv6 in
// brackets, Unix sockets through their path, TLS servers over https.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ListenMessage } from '../../src/agent/protocol.js';
import { targetAddress } from '../../src/run/target-address.js';

const listen = (over: Partial<ListenMessage>): ListenMessage => ({
  v: 1,
  pid: 1,
  threadId: 0,
  t: 0,
  type: 'listen',
  address: '127.0.0.1',
  ...over,
});

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
  assert.deepEqual(a, { url: 'http://localhost/x', socket: '/tmp/app.sock', tls: false, label: '/tmp/app.sock' });
});

test('a TLS server (kind https) is reached over https, on a port or a Unix socket', () => {
  const a = targetAddress(listen({ address: '0.0.0.0', port: 8443, server: { kind: 'https', keepAliveTimeout: 5000 } }), '/');
  assert.deepEqual(a, { url: 'https://127.0.0.1:8443/', tls: true, label: '127.0.0.1:8443' });
  const b = targetAddress(listen({ address: '/tmp/tls.sock', pipe: '/tmp/tls.sock', server: { kind: 'https' } }), '/x');
  assert.deepEqual(b, { url: 'https://localhost/x', socket: '/tmp/tls.sock', tls: true, label: '/tmp/tls.sock' });
  assert.equal(targetAddress(listen({ port: 80, server: { kind: 'http' } }), '/').tls, false);
});
