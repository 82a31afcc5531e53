// The shared scenario every framework adapter must pass, against a real server of that
// framework in a child process (test/protect/fixtures/protect-server.ts): a blocked loop
// flips protection on and back off, exempt paths answer, a threshold of 0 disables the
// signal, the body follows Accept, and a custom handler gets the reason.

import { after, before, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const fixture = fileURLToPath(new URL('../fixtures/protect-server.js', import.meta.url));

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}
type Ports = Record<'guarded' | 'disabled' | 'custom', number>;

/** One GET on a fresh connection (no keep-alive, so each request is a new accept on the server). */
export function get(port: number, path: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Starts /block on the server and resolves once it has written "started", i.e. its loop is
 * blocked from now on; the block lasts until `flag` exists. `done` settles when it is over.
 */
function startBlock(port: number, flag: string): Promise<{ done: Promise<Reply> }> {
  return new Promise((resolveStarted, reject) => {
    const path = `/block?ms=200&until=${encodeURIComponent(flag)}`;
    const req = request({ host: '127.0.0.1', port, path, agent: false, timeout: 15_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      const done = new Promise<Reply>((resolveDone) => {
        res.on('end', () => resolveDone({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      res.once('data', (c: string) => {
        body += c;
        resolveStarted({ done });
        res.on('data', (d: string) => {
          body += d;
        });
      });
    });
    req.on('timeout', () => req.destroy(new Error('/block timed out')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Sends `path` while the server's loop is blocked; resolves with that reply (answered after
 * the block). The block ends only once the request has been handed to the kernel, so it is
 * waiting at the server when the loop comes back, however slow this (client) process is.
 * The block is asked of the unguarded app (`disabled`, same process, same loop), so a machine
 * stall cannot get the /block request itself shed.
 */
async function duringBlock(blockPort: number, port: number, path: string, headers?: Record<string, string>): Promise<Reply> {
  const flag = join(tmpdir(), `hotpath-protect-${process.pid}-${++blocks}`);
  const { done } = await startBlock(blockPort, flag);
  const blocked = done.then((r) => assert.equal(r.status, 200, `/block answered ${r.status}`));
  const sent = send(port, path, headers);
  await sent.written;
  writeFileSync(flag, '');
  try {
    await blocked;
    return await sent.reply;
  } finally {
    rmSync(flag, { force: true });
  }
}

let blocks = 0;

/** A GET whose `written` settles once the request is handed to the kernel. */
function send(port: number, path: string, headers: Record<string, string> = {}): { written: Promise<void>; reply: Promise<Reply> } {
  let markWritten = (): void => {};
  const written = new Promise<void>((resolve) => {
    markWritten = resolve;
  });
  const reply = new Promise<Reply>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false, timeout: 15_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('finish', markWritten);
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', (err) => {
      markWritten();
      reject(err);
    });
    req.end();
  });
  return { written, reply };
}

/** Polls until `path` answers 200 (protection released); fails after ~5 s. */
async function until200(port: number, path: string): Promise<Reply> {
  let last: Reply | undefined;
  for (let i = 0; i < 100; i++) {
    last = await get(port, path);
    if (last.status === 200) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`still ${last?.status} after recovery`);
}

/** `skip`: why this framework cannot run on this Node version (the suite is then skipped with that reason). */
export function frameworkSuite(framework: string, skip?: string): void {
  let child: ChildProcess | undefined;
  let ports: Ports;
  const test = (name: string, fn: () => Promise<void>): void => {
    nodeTest(name, skip === undefined ? {} : { skip }, fn);
  };

  before(async () => {
    if (skip !== undefined) return;
    child = spawn(process.execPath, [fixture, framework], { stdio: ['pipe', 'pipe', 'inherit'] });
    ports = await new Promise<Ports>((resolve, reject) => {
      let out = '';
      child?.stdout?.setEncoding('utf8');
      child?.stdout?.on('data', (c: string) => {
        out += c;
        if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]) as Ports);
      });
      child?.once('exit', (code) => reject(new Error(`${framework} fixture exited with ${code}`)));
    });
  });

  after(() => {
    child?.kill();
  });

  test(`${framework}: a blocked loop flips protection on (503 + Retry-After), then back off`, async () => {
    await until200(ports.guarded, '/hello'); // a server still starting up is late too
    const shed = await duringBlock(ports.disabled, ports.guarded, '/hello');
    assert.equal(shed.status, 503);
    assert.equal(shed.headers['retry-after'], '1');
    assert.match(shed.body, /event loop delay/);
    const back = await until200(ports.guarded, '/hello');
    assert.equal(back.body, 'hello');
    const status = JSON.parse((await get(ports.guarded, '/status')).body) as { shed: number; eventLoopDelay: number };
    assert.ok(status.shed >= 1, `status counts shed requests: ${JSON.stringify(status)}`);
    assert.equal(typeof status.eventLoopDelay, 'number');
  });

  test(`${framework}: exempt paths answer 200 while under pressure`, async () => {
    const health = await duringBlock(ports.disabled, ports.guarded, '/health');
    assert.equal(health.status, 200);
    assert.equal(health.body, 'ok');
  });

  test(`${framework}: the body is JSON when Accept asks for JSON, text otherwise`, async () => {
    const json = await duringBlock(ports.disabled, ports.guarded, '/hello', { accept: 'application/json' });
    assert.equal(json.status, 503);
    assert.match(String(json.headers['content-type']), /^application\/json/);
    const parsed = JSON.parse(json.body) as { statusCode: number; reason: string };
    assert.equal(parsed.statusCode, 503);
    assert.equal(parsed.reason, 'eventLoopDelay');
    await until200(ports.guarded, '/hello');
    const text = await duringBlock(ports.disabled, ports.guarded, '/hello', { accept: 'text/html' });
    assert.equal(text.status, 503);
    assert.match(String(text.headers['content-type']), /^text\/plain/);
    assert.match(text.body, /^Service Unavailable/);
  });

  test(`${framework}: thresholds of 0 disable the signals`, async () => {
    const reply = await duringBlock(ports.disabled, ports.disabled, '/hello');
    assert.equal(reply.status, 200);
    assert.equal(reply.body, 'hello');
  });

  test(`${framework}: the custom handler is called with the reason`, async () => {
    const reply = await duringBlock(ports.disabled, ports.custom, '/hello');
    assert.equal(reply.status, 503);
    assert.equal(reply.headers['x-reason'], 'eventLoopDelay');
    assert.equal(reply.headers['retry-after'], '7');
    assert.equal(reply.body, 'custom:eventLoopDelay');
    await until200(ports.custom, '/hello');
  });
}
