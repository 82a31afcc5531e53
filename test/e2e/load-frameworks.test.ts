import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';

// express ships no types (and @types/express is not a dependency): the little used here, typed here.
interface ExpressRes {
  status(code: number): ExpressRes;
  json(body: unknown): void;
}
interface ExpressApp extends http.RequestListener {
  get(path: string, handler: (req: { params: Record<string, string> }, res: ExpressRes) => void): void;
}
const express = createRequire(import.meta.url)('express') as () => ExpressApp;

const main = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

function cliJson(...args: string[]): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [main, 'load', ...args, '--json'], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as Record<string, any>);
    });
  });
}

test('hotpath load against a real express app counts exactly what the app handled, by status', async () => {
  let handled = 0;
  const app = express();
  app.get('/users/:id', (req, res) => {
    handled++;
    if (req.params.id === '404') res.status(404).json({ error: 'nope' });
    else res.json({ id: req.params.id, name: 'ada' });
  });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const r = await cliJson(`${base}/users/1`, '-a', '600', '-c', '8', '-w', '2');
    assert.equal(r.requests.total, 600);
    assert.deepEqual(r.statusCodes, { 200: 600 });
    const missing = await cliJson(`${base}/users/404`, '-a', '100', '-c', '2', '-w', '1', '-p', '4');
    assert.deepEqual(missing.statusCodes, { 404: 100 });
    assert.equal(handled, 700);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test('hotpath load against fastify: POST bodies arrive intact, open model at a fixed rate', async () => {
  const fastify = Fastify();
  const names: string[] = [];
  fastify.post('/echo', async (req) => {
    names.push((req.body as { name: string }).name);
    return { ok: true };
  });
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  const port = (fastify.server.address() as AddressInfo).port;
  try {
    const r = await cliJson(
      `http://127.0.0.1:${port}/echo`,
      '-m',
      'POST',
      '-H',
      'content-type: application/json',
      '-b',
      '{"name":"ada"}',
      '-R',
      '300',
      '-d',
      '1.5',
      '-c',
      '4',
      '-w',
      '1',
    );
    assert.equal(r.model, 'open');
    assert.ok(r.requests.total > 300, `total ${r.requests.total}`);
    assert.deepEqual(Object.keys(r.statusCodes), ['200']);
    assert.ok(names.length >= r.requests.total);
    assert.deepEqual([...new Set(names)], ['ada']);
    assert.ok(r.serviceTime.count === r.requests.total);
  } finally {
    await fastify.close();
  }
});
