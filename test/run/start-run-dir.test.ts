// The first meta.json: written at once (a run that never finishes still says so), with
// credentials kept out of the recorded options.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveRunOptions } from '../../src/run/resolve-run-options.js';
import { startRunDir } from '../../src/run/start-run-dir.js';
import { redactHeaders } from '../../src/redact.js';
import type { RunMeta } from '../../src/run-dir/schema.js';

const base = mkdtempSync(join(tmpdir(), 'hotpath-start-run-dir-'));
after(() => rmSync(base, { recursive: true, force: true }));

test('credentials in headers are redacted, other headers kept', () => {
  assert.deepEqual(redactHeaders(['Authorization: Bearer abc', 'x-trace: 1', 'Cookie:a=b']), [
    'Authorization: <redacted>',
    'x-trace: 1',
    'Cookie: <redacted>',
  ]);
  assert.deepEqual(redactHeaders({ 'X-Api-Key': 'k', accept: 'json' }), { 'X-Api-Key': '<redacted>', accept: 'json' });
  assert.equal(redactHeaders(undefined), undefined);
});

test('the first meta.json says the run did not finish, until the run overwrites it', async () => {
  const o = resolveRunOptions({ command: ['node', 'app.js'], out: base, headers: ['authorization: secret'], duration: 1 }, base);
  const { dir } = await startRunDir(o);
  const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as RunMeta;
  assert.equal(meta.outcome.status, 'failed');
  assert.match(meta.outcome.reason ?? '', /did not finish/);
  assert.deepEqual(meta.command, ['node', 'app.js']);
  assert.deepEqual(meta.options.headers, ['authorization: <redacted>']);
  assert.ok(!JSON.stringify(meta).includes('secret'));
});

test('issue 23.1: meta.json keeps URL userinfo, token-like and --redact headers and -b bodies out', async () => {
  const o = resolveRunOptions(
    {
      url: 'http://admin:pw-URL-SECRET@127.0.0.1:9/x',
      out: base,
      duration: 1,
      body: '{"password":"BODY-SECRET"}',
      headers: ['X-Session: SESSION-SECRET', 'X-Api-Key: KEY-SECRET', 'X-Tenant: TENANT-SECRET', 'accept: application/json'],
      redact: ['x-tenant'],
    },
    base,
  );
  const { dir } = await startRunDir(o);
  const text = readFileSync(join(dir, 'meta.json'), 'utf8');
  assert.doesNotMatch(text, /SECRET/);
  const meta = JSON.parse(text) as RunMeta;
  assert.deepEqual(meta.command, ['http://<redacted>@127.0.0.1:9/x']);
  assert.equal(meta.options.url, 'http://<redacted>@127.0.0.1:9/x');
  assert.deepEqual(meta.options.headers, [
    'X-Session: <redacted>',
    'X-Api-Key: <redacted>',
    'X-Tenant: <redacted>',
    'accept: application/json',
  ]);
  assert.equal(meta.options.body, '<redacted> (26 bytes)');
});
