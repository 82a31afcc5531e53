// Issue 23.1: the one rule of what is a secret (src/redact.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isSecretHeader, redactBody, redactHeaders, redactUrl } from '../src/redact.js';

test('issue 23.1: URL userinfo is redacted, parseable or not; the rest of the URL is kept', () => {
  assert.equal(redactUrl('http://admin:pw@127.0.0.1:3000/a?b=1'), 'http://<redacted>@127.0.0.1:3000/a?b=1');
  assert.equal(redactUrl('https://tok3n@host/'), 'https://<redacted>@host/');
  assert.equal(redactUrl('http://a:b@c@host/x@y'), 'http://<redacted>@host/x@y');
  assert.equal(redactUrl('http://u:p w@host:notaport/'), 'http://<redacted>@host:notaport/');
  assert.equal(redactUrl('http://127.0.0.1:3000/mail/a@b'), 'http://127.0.0.1:3000/mail/a@b');
  assert.equal(redactUrl('http://127.0.0.1:3000/?to=a@b'), 'http://127.0.0.1:3000/?to=a@b');
  assert.equal(new URL(redactUrl('http://u:p@h:1/p')).pathname, '/p');
});

test('issue 23.1: token-like headers, named ones and --redact ones are secret; others are not', () => {
  for (const h of [
    'Authorization',
    'cookie',
    'X-Api-Key',
    'X-Session',
    'x-auth-token',
    'X-CSRF-Token',
    'X-Amz-Security-Token',
    'Password',
  ]) {
    assert.equal(isSecretHeader(h), true, h);
  }
  for (const h of ['Accept', 'Content-Type', 'X-Trace-Id', 'User-Agent', 'Host']) assert.equal(isSecretHeader(h), false, h);
  assert.equal(isSecretHeader('X-Tenant', ['x-tenant']), true);
  assert.deepEqual(redactHeaders(['X-Session: s1', 'X-Tenant:acme', 'accept: */*'], ['X-TENANT']), [
    'X-Session: <redacted>',
    'X-Tenant: <redacted>',
    'accept: */*',
  ]);
  assert.equal(redactBody('{"password":"hunter2"}'), '<redacted> (22 bytes)');
});
