// Issue 17.4: headers the user sets are honoured. `-H "Connection: close"` was silently
// dropped (20 connections for 500,000 requests): it now means --no-keepalive, and any other
// header the engine must write itself is named in a warning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../src/load/load.js';
import { buildPlan } from '../../src/load/load-plan.js';
import { httpServer } from './helpers/servers.js';

test('issue 17.4: -H "Connection: close" makes one connection per request (the server counts them)', async () => {
  const s = await httpServer((_req, res) => res.end('ok'));
  try {
    const r = await load({ url: s.url, headers: ['Connection: close'], amount: 60, connections: 3, workers: 1 });
    assert.equal(r.requests.total, 60);
    assert.equal(s.requests, 60);
    // One more: the preflight connection opened before load to check the target answers.
    assert.equal(s.connections, 60 + 1, `the server saw ${s.connections} connections for 60 requests`);
    assert.equal(r.connections.opened, 60);
    assert.equal(r.options.keepalive, false);
    assert.deepEqual(r.generator.warnings, []);
  } finally {
    await s.close();
  }
});

test('issue 17.4: headers the engine overrides are reported with a warning; agreeing ones are not', () => {
  const warned = buildPlan({
    url: 'http://127.0.0.1:1/',
    method: 'POST',
    body: 'abc',
    headers: ['Content-Length: 99', 'Transfer-Encoding: chunked', 'Connection: upgrade', 'Host: example.test'],
  }).warnings.join('\n');
  assert.match(warned, /"Content-Length: 99".*Content-Length: 3/);
  assert.match(warned, /"Transfer-Encoding: chunked"/);
  assert.match(warned, /"Connection: upgrade".*Connection: keep-alive/);
  assert.doesNotMatch(warned, /Host/);
  const quiet = buildPlan({
    url: 'http://127.0.0.1:1/',
    method: 'POST',
    body: 'abc',
    headers: ['Content-Length: 3', 'Connection: keep-alive'],
  });
  assert.deepEqual(quiet.warnings, []);
  const close = buildPlan({ url: 'http://127.0.0.1:1/', headers: ['connection: Close'] });
  assert.equal(close.flags.keepalive, false);
  assert.match(close.templates[0].bytes.toString('latin1'), /\r\nConnection: close\r\n/);
  assert.deepEqual(close.warnings, []);
});
