// Issue 23.1: credentials in the URL of `hotpath run --url` and `hotpath load` are sent (as a
// Basic Authorization header) but never written into any file of the run directory, nor
// printed on stdout (--json) or stderr.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../run/helpers/run-cli.js';
import { htmlWithPayload } from './helpers/html-payload.js';

const out = mkdtempSync(join(tmpdir(), 'hotpath-secrets-'));
after(() => rmSync(out, { recursive: true, force: true }));

const SECRET = 'pw-3e1d9c';

async function server(): Promise<{ port: number; auth: Set<string>; close(): Promise<void> }> {
  const auth = new Set<string>();
  const s = http.createServer((req, res) => {
    auth.add(req.headers.authorization ?? '');
    res.end('ok');
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return {
    port: (s.address() as AddressInfo).port,
    auth,
    close: () =>
      new Promise((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

test('issue 23.1: run --url with userinfo: no file of the run directory, no output holds the password', async () => {
  const s = await server();
  try {
    const url = `http://admin:${SECRET}@127.0.0.1:${s.port}/`;
    const r = await runCli(
      [
        'run',
        '--url',
        url,
        '-d',
        '1',
        '-c',
        '2',
        '-w',
        '1',
        '-o',
        out,
        '--json',
        '-H',
        `X-Session: ${SECRET}`,
        '-b',
        `{"password":"${SECRET}"}`,
        '-m',
        'POST',
      ],
      { timeoutMs: 60_000 },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual([...s.auth], [`Basic ${Buffer.from(`admin:${SECRET}`).toString('base64')}`], 'the credentials are still sent');
    assert.ok(!r.stdout.includes(SECRET) && !r.stderr.includes(SECRET), 'not printed');
    const [dir] = readdirSync(out);
    const files = readdirSync(join(out, dir));
    for (const f of ['meta.json', 'load.json', 'report.json', 'report.md', 'report.html']) assert.ok(files.includes(f), `${f} written`);
    for (const f of files) assert.ok(!readFileSync(join(out, dir, f), 'latin1').includes(SECRET), `${f} holds the password`);
    // The page's run data is embedded compressed: decoded, it names the URL, redacted.
    const page = htmlWithPayload(readFileSync(join(out, dir, 'report.html'), 'utf8'));
    assert.ok(!page.includes(SECRET), "report.html's embedded data holds the password");
    assert.match(page, /http:\/\/<redacted>@127\.0\.0\.1/);
    assert.match(readFileSync(join(out, dir, 'load.json'), 'utf8'), /"url": "http:\/\/<redacted>@127\.0\.0\.1:/);
  } finally {
    await s.close();
  }
});

test('issue 23.1: hotpath load with userinfo prints the URL redacted, as text and as --json', async () => {
  const s = await server();
  try {
    const url = `http://u:${SECRET}@127.0.0.1:${s.port}/`;
    for (const extra of [[], ['--json']]) {
      const r = await runCli(['load', url, '-a', '20', '-c', '1', '-w', '1', ...extra], { timeoutMs: 30_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(!r.stdout.includes(SECRET) && !r.stderr.includes(SECRET), `printed with ${extra.join(' ')}`);
      assert.match(r.stdout + r.stderr, /<redacted>@127\.0\.0\.1/);
    }
    const bad = await runCli(['load', `ftp://u:${SECRET}@127.0.0.1/`], { timeoutMs: 30_000 });
    assert.match(bad.stderr, /HOTPATH_ERR_INVALID_URL/);
    assert.ok(!bad.stderr.includes(SECRET));
  } finally {
    await s.close();
  }
});
