import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { httpServer } from '../load/helpers/servers.js';

const main = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'hotpath-load-cli-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [main, 'load', ...args],
      { timeout: 30_000, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function expectError(r: Run, code: string, exit: number): void {
  assert.equal(r.code, exit, r.stderr);
  assert.match(r.stderr, new RegExp(`error ${code}:`));
  assert.doesNotMatch(r.stderr, /\n\s+at .+:\d+:\d+/, 'no stack trace without --debug');
  assert.equal(r.stdout, '');
}

test('bad input yields its code and exit 2 (usage errors)', async () => {
  expectError(await cli(), 'HOTPATH_ERR_MISSING_ARGUMENT', 2);
  expectError(await cli('not a url'), 'HOTPATH_ERR_INVALID_URL', 2);
  expectError(await cli('ftp://127.0.0.1/'), 'HOTPATH_ERR_INVALID_URL', 2);
  expectError(await cli('http://127.0.0.1:1/', '-c', '-5'), 'HOTPATH_ERR_INVALID_OPTION', 2);
  expectError(await cli('http://127.0.0.1:1/', '-c', '1e9'), 'HOTPATH_ERR_INVALID_OPTION', 2);
  expectError(await cli('http://127.0.0.1:1/', '-d', '0'), 'HOTPATH_ERR_INVALID_OPTION', 2);
  expectError(await cli('http://127.0.0.1:1/', '--timeout', '0'), 'HOTPATH_ERR_INVALID_OPTION', 2);
  expectError(await cli('http://127.0.0.1:1/', '-R', '-10'), 'HOTPATH_ERR_INVALID_OPTION', 2);
  expectError(await cli('http://127.0.0.1:1/', '-H', 'no colon here'), 'HOTPATH_ERR_INVALID_OPTION', 2);
  expectError(await cli('http://127.0.0.1:1/', '-m', 'GE T'), 'HOTPATH_ERR_INVALID_OPTION', 2);
  expectError(await cli('http://127.0.0.1:1/', '-d', '1', '-a', '10'), 'HOTPATH_ERR_INVALID_OPTION', 2);
});

test('bad input files yield their codes and exit 2, like bad flags (issue 23.10); an unwritable --hdr-log exits 1', async () => {
  expectError(await cli('http://127.0.0.1:1/', '--body-file', join(dir, 'missing.txt')), 'HOTPATH_ERR_BODY_FILE', 2);
  expectError(await cli('http://127.0.0.1:1/', '--scenario', join(dir, 'missing.json')), 'HOTPATH_ERR_SCENARIO', 2);
  const notJson = join(dir, 'bad.json');
  writeFileSync(notJson, '[{ nope');
  expectError(await cli('http://127.0.0.1:1/', '--scenario', notJson), 'HOTPATH_ERR_SCENARIO', 2);
  const wrongShape = join(dir, 'shape.json');
  writeFileSync(wrongShape, JSON.stringify([{ path: 'no-slash' }]));
  expectError(await cli('http://127.0.0.1:1/', '--scenario', wrongShape), 'HOTPATH_ERR_SCENARIO', 2);
  expectError(await cli('http://127.0.0.1:1/', '--hdr-log', join(dir, 'no', 'such', 'dir.hlog')), 'HOTPATH_ERR_HDR_LOG', 1);
});

test('nothing listening and an unknown host yield CONNECT and DNS errors; --debug adds the stack', async () => {
  const port = await closedPort();
  const refused = await cli(`http://127.0.0.1:${port}/`, '-d', '1');
  expectError(refused, 'HOTPATH_ERR_CONNECT', 1);
  assert.match(refused.stderr, /ECONNREFUSED/);
  expectError(await cli('http://hotpath-no-such-host.invalid/', '-d', '1'), 'HOTPATH_ERR_DNS', 1);
  const debug = await cli(`http://127.0.0.1:${port}/`, '-d', '1', '--debug');
  assert.equal(debug.code, 1);
  assert.match(debug.stderr, /\n\s+at .+:\d+:\d+/);
});

test('--json prints only the documented LoadResult on stdout', async () => {
  const s = await httpServer((_req, res) => res.end('hello'));
  try {
    const r = await cli(s.url, '-a', '200', '-c', '4', '-w', '1', '--json');
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as Record<string, any>;
    assert.equal(result.version, 1);
    assert.equal(result.requests.total, 200);
    assert.equal(typeof result.requests.perSecond, 'number');
    for (const k of ['p50', 'p90', 'p99', 'p999', 'max', 'mean']) assert.equal(typeof result.latency[k], 'number', k);
    assert.deepEqual(result.statusCodes, { 200: 200 });
    assert.equal(result.errors.total, 0);
    assert.equal(result.errors.timeouts, 0);
    assert.deepEqual(result.errors.byCode, {});
    assert.equal(typeof result.generator.cpuUserMs, 'number');
    assert.equal(typeof result.generator.cpuSystemMs, 'number');
    assert.equal(s.requests, 200);
  } finally {
    await s.close();
  }
});

test('without --json the results table goes to stderr and stdout stays empty', async () => {
  const s = await httpServer((_req, res) => res.end('hello'));
  try {
    const r = await cli(s.url, '-R', '200', '-a', '100', '-c', '2', '-w', '1');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.doesNotMatch(r.stderr, /\u001b\[/, 'no live progress or colour when stderr is not a terminal');
    for (const label of ['p50', 'p97.5', 'p99.99', 'stdev', 'service time', 'status      200: 100', 'schedule', 'generator']) {
      assert.ok(r.stderr.includes(label), `${label} in\n${r.stderr}`);
    }
  } finally {
    await s.close();
  }
});

/** A TCP server that accepts connections and then answers never, or resets them on the first bytes. */
async function rawServer(onData: 'ignore' | 'reset'): Promise<{ url: string; close: () => void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket)).on('error', () => {});
    socket.on('data', () => {
      if (onData === 'reset') socket.resetAndDestroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

test('a run in which no request got a response exits 1 with NO_RESPONSES, after printing what it gathered', async () => {
  const silent = await rawServer('ignore');
  const resetting = await rawServer('reset');
  try {
    const hung = await cli(silent.url, '-d', '1', '-c', '2', '-w', '1', '--timeout', '300', '--json');
    assert.equal(hung.code, 1, hung.stderr);
    assert.match(hung.stderr, /error HOTPATH_ERR_NO_RESPONSES: No request got a response in \d+\.\d s \(\d+ sent\): timeouts \d+/);
    const result = JSON.parse(hung.stdout) as { requests: { total: number }; errors: { timeouts: number } };
    assert.equal(result.requests.total, 0, 'the LoadResult is still printed');
    assert.ok(result.errors.timeouts > 0);

    const reset = await cli(resetting.url, '-d', '1', '-c', '2', '-w', '1');
    assert.equal(reset.code, 1, reset.stderr);
    assert.match(reset.stderr, /error HOTPATH_ERR_NO_RESPONSES: .*ECONNRESET \d+/);
    assert.match(reset.stderr, /ECONNRESET/, 'the results table is still shown');
  } finally {
    silent.close();
    resetting.close();
  }
});
