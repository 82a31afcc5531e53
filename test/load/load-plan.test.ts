import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPlan, type LoadOptions } from '../../src/load/load-plan.js';

const code = (opts: LoadOptions) => {
  try {
    buildPlan(opts);
  } catch (e) {
    return (e as { code: string }).code;
  }
  return 'no error';
};
const url = 'http://127.0.0.1:3000/items?page=2';

test('the programmatic API validates through the same declaration as the CLI', () => {
  assert.equal(code({ url, connections: -1 }), 'HOTPATH_ERR_INVALID_OPTION');
  assert.equal(code({ url, connections: 1e9 }), 'HOTPATH_ERR_INVALID_OPTION');
  assert.equal(code({ url, duration: 5, amount: 10 }), 'HOTPATH_ERR_INVALID_OPTION');
  assert.equal(code({ url, rate: 0.01, duration: 1 }), 'HOTPATH_ERR_INVALID_OPTION');
  assert.equal(code({ url, method: 'G T' }), 'HOTPATH_ERR_INVALID_OPTION');
  assert.equal(code({ url, connections: 1000, pipelining: 1024, amount: 5 }), 'HOTPATH_ERR_INVALID_OPTION');
  assert.equal(code({ url, ...({ conections: 3 } as object) }), 'HOTPATH_ERR_UNKNOWN_OPTION');
  assert.equal(code({ url, keepalive: false, pipelining: 4 }), 'HOTPATH_ERR_INVALID_OPTION');
  assert.equal(code({ url: '' }), 'HOTPATH_ERR_MISSING_ARGUMENT');
  assert.equal(code({ url: 'localhost:3000' }), 'HOTPATH_ERR_INVALID_URL');
  assert.equal(code({ url: 'file:///etc/passwd' }), 'HOTPATH_ERR_INVALID_URL');
  assert.equal(code({ url, requests: [] }), 'HOTPATH_ERR_SCENARIO');
  assert.equal(code({ url, requests: [{ path: '/a', extra: 1 } as never] }), 'HOTPATH_ERR_SCENARIO');
});

test('requests are prebuilt with Host, path and query, headers, body and keep-alive', () => {
  const plan = buildPlan({ url, method: 'post', headers: { 'X-Id': '7' }, body: 'héllo', keepalive: false });
  const text = plan.templates[0].bytes.toString('utf8');
  assert.equal(
    text,
    'POST /items?page=2 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\nX-Id: 7\r\nConnection: close\r\nContent-Length: 6\r\n\r\nhéllo',
  );
  assert.equal(plan.flags.duration, 10, 'the default duration applies when no amount is given');
  assert.ok(plan.flags.workers >= 1);
});

test('scenario files are read, validated and merged with the global headers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-plan-'));
  try {
    const file = join(dir, 's.json');
    writeFileSync(
      file,
      JSON.stringify([
        { method: 'POST', path: '/users', body: { name: 'ada' } },
        { path: '/me', headers: { 'x-a': 'b' } },
      ]),
    );
    const plan = buildPlan({ url, scenario: file, headers: ['Authorization: Bearer t'] });
    assert.equal(plan.templates.length, 2);
    assert.equal(plan.flags.scenarioLength, 2);
    const first = plan.templates[0].bytes.toString();
    assert.match(first, /^POST \/users HTTP\/1\.1\r\n/);
    assert.match(first, /Authorization: Bearer t\r\n/);
    assert.match(first, /\r\n\r\n\{"name":"ada"\}$/);
    assert.match(plan.templates[1].bytes.toString(), /^GET \/me HTTP\/1\.1\r\n[\s\S]*x-a: b\r\n/);
    writeFileSync(file, '{"not":"an array"}');
    assert.equal(code({ url, scenario: file }), 'HOTPATH_ERR_SCENARIO');
    assert.equal(code({ url, bodyFile: join(dir, 'nope') }), 'HOTPATH_ERR_BODY_FILE');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('credentials in the URL become a Basic Authorization header; IPv6 hosts keep their brackets in Host', () => {
  const auth = buildPlan({ url: 'http://ada:s%3Acret@127.0.0.1:3000/' }).templates[0].bytes.toString();
  assert.match(auth, /\r\nAuthorization: Basic YWRhOnM6Y3JldA==\r\n/);
  assert.doesNotMatch(auth, /ada:/);
  const v6 = buildPlan({ url: 'http://[::1]:8080/x' }).templates[0].bytes.toString();
  assert.match(v6, /^GET \/x HTTP\/1\.1\r\nHost: \[::1\]:8080\r\n/);
});
