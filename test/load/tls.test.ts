import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from '../../src/load/load.js';

/** A self-signed certificate for localhost, made at test time; undefined without openssl. */
function selfSigned(dir: string): { key: Buffer; cert: Buffer } | undefined {
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore', timeout: 20_000 },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } catch {
    return undefined;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'hotpath-tls-'));
const pair = selfSigned(dir);
test.after(() => rmSync(dir, { recursive: true, force: true }));

test(
  'HTTPS: a self-signed certificate fails verification by default and works with insecure',
  { skip: pair === undefined ? 'openssl is not available to make a certificate' : false },
  async () => {
    let count = 0;
    const server = https.createServer({ key: pair?.key, cert: pair?.cert }, (_req, res) => {
      count++;
      res.end('secure');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `https://localhost:${(server.address() as AddressInfo).port}/`;
    try {
      await assert.rejects(load({ url, amount: 10, connections: 1, workers: 1 }), (err: { code?: string; message: string }) => {
        assert.equal(err.code, 'HOTPATH_ERR_TLS');
        assert.match(err.message, /--insecure/);
        return true;
      });
      const r = await load({ url, amount: 200, connections: 2, workers: 1, insecure: true });
      assert.equal(r.requests.total, 200);
      assert.equal(count, 200);
      assert.deepEqual(r.statusCodes, { 200: 200 });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  },
);
