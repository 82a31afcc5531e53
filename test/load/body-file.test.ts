// Issue 23.4: --body-file sends the file's bytes unchanged (a binary body used to be decoded
// as UTF-8 and re-encoded: 1,000 random bytes went out as 1,825), and the request bytes are
// one shared copy, whatever the number of workers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from '../../src/load/load.js';
import { buildPlan } from '../../src/load/load-plan.js';

/** A node:http server that keeps every request body it receives. */
async function bodyServer(): Promise<{ url: string; bodies: Buffer[]; close(): Promise<void> }> {
  const bodies: Buffer[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks));
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/upload`;
  return {
    url,
    bodies,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

test('issue 23.4: --body-file sends the exact bytes of a binary file (the server receives the file)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-body-'));
  const server = await bodyServer();
  try {
    // Bytes that are not valid UTF-8 (0xff, lone continuation bytes) change when decoded as text.
    const bytes = Buffer.concat([randomBytes(1000), Buffer.from([0xff, 0xfe, 0x80, 0xc3])]);
    const file = join(dir, 'body.bin');
    writeFileSync(file, bytes);
    const r = await load({ url: server.url, method: 'POST', bodyFile: file, amount: 20, connections: 2, workers: 2 });
    assert.equal(r.requests.total, 20);
    assert.equal(server.bodies.length, 20);
    for (const b of server.bodies) assert.ok(b.equals(bytes), `received ${b.length} bytes, sent file has ${bytes.length}`);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('issue 23.4: the request bytes live in one SharedArrayBuffer (workers share it instead of a copy each)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-body-'));
  try {
    const file = join(dir, 'body.bin');
    writeFileSync(file, randomBytes(4096));
    const plan = buildPlan({ url: 'http://127.0.0.1:1/', method: 'PUT', bodyFile: file });
    assert.ok(plan.templates[0].bytes.buffer instanceof SharedArrayBuffer);
    assert.match(plan.templates[0].bytes.subarray(0, 200).toString('latin1'), /Content-Length: 4096\r\n/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
