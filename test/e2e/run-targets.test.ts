// `hotpath run` and the server it drives: an HTTPS server is driven over https (its self-signed
// certificate is not verified: hotpath started it), and an app that runs a second HTTP server
// in-process (a config service it calls per request) has only the driven server's requests in
// its server-side figures, the other's counted apart.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRunDir } from '../../src/profile/read-run.js';
import { loadWindow, targetThreads, windowSamples } from '../../src/analyze/signals/load-window.js';
import type { Report } from '../../src/report/report-schema.js';
import { apps, onlyRunDir, readMeta, runCli, survivors, tempOut } from '../run/helpers/run-cli.js';

/** A self-signed certificate for localhost, made at test time (as test/load/tls.test.ts); undefined without openssl. */
function selfSigned(dir: string): { key: string; cert: string } | undefined {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', key, '-out', cert],
      { stdio: 'ignore', timeout: 20_000 },
    );
    return { key, cert };
  } catch {
    return undefined;
  }
}

const certDir = mkdtempSync(join(tmpdir(), 'hotpath-run-tls-'));
const pair = selfSigned(certDir);
after(() => rmSync(certDir, { recursive: true, force: true }));

async function runApp(file: string, flags: string[], env: NodeJS.ProcessEnv = {}) {
  const tmp = tempOut();
  after(tmp.cleanup);
  const r = await runCli(['run', '-w', '1', '-c', '4', '-d', '1.5', ...flags, '--json', '--out', tmp.out, '--', 'node', file], {
    cwd: apps,
    env,
  });
  const dir = onlyRunDir(tmp.out);
  return { r, dir, meta: readMeta(dir), run: await readRunDir(dir) };
}

describe('hotpath run: the server it drives', () => {
  test(
    'an HTTPS server is driven over https, without verifying the certificate of the server hotpath started',
    { skip: pair === undefined ? 'openssl is not available to make a certificate' : false },
    async () => {
      const { r, meta, run } = await runApp('https-server.cjs', [], { HTTPS_KEY: pair?.key, HTTPS_CERT: pair?.cert });
      assert.equal(r.code, 0, r.stderr);
      const listen = run.threads.flatMap((t) => t.listens).find((l) => l.port === meta.target?.port);
      assert.equal(listen?.server?.kind, 'https');
      assert.match(meta.target?.url ?? '', /^https:\/\/127\.0\.0\.1:\d+\/$/);
      assert.ok(run.load && run.load.requests.total > 0, r.stderr);
      assert.equal(run.load.errors.total, 0, JSON.stringify(run.load.errors));
      assert.deepEqual(Object.keys(run.load.statusCodes), ['200']);
      const served = targetThreads(run)
        .flatMap((t) => windowSamples(t, loadWindow(run)))
        .reduce((n, s) => n + (s.http?.finished ?? 0), 0);
      assert.ok(served > 0, 'the agent counted the requests it served over TLS');
      assert.match(r.stderr, /HTTPS; its certificate is not verified/);
      assert.deepEqual(survivors(meta), []);
    },
  );

  test("a second HTTP server in the same process: only the driven server's requests are in the server-side figures", async () => {
    const { r, meta, run } = await runApp('in-process-service.cjs', []);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(meta.otherPorts?.length, 1, 'the config service listened on a port of its own');
    const samples = targetThreads(run).flatMap((t) => windowSamples(t, loadWindow(run)));
    const served = samples.reduce((n, s) => n + (s.http?.finished ?? 0), 0);
    const other = samples.reduce((n, s) => n + (s.httpOther ?? 0), 0);
    const total = run.load!.requests.total;
    // Each request the load sent made one call to the config service: counted with it, the
    // server would have served about twice what the load got back.
    assert.ok(total > 50, `load ${total}`);
    assert.ok(served >= total * 0.8 && served <= total * 1.2, `served ${served}, load ${total}`);
    assert.ok(other >= total * 0.8 && other <= total * 1.2, `config calls ${other}, load ${total}`);
    assert.ok(samples.some((s) => s.http?.drivenOnly === true));
    const report = JSON.parse(r.stdout) as Report;
    assert.ok(report.telemetry?.http && report.telemetry.http.requests <= total * 1.2, JSON.stringify(report.telemetry?.http));
    assert.deepEqual(survivors(meta), []);
  });
});
