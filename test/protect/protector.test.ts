// The guard as a whole: no timer keeps the process alive, exempt matching, shed counting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { IncomingMessage } from 'node:http';
import { protect } from '../../src/protect/index.js';

const entry = fileURLToPath(new URL('../../src/protect/index.js', import.meta.url));

test('a process that creates protect() and does nothing else exits on its own', () => {
  const code = `import(${JSON.stringify(entry)}).then((m) => { m.protect({ maxEventLoopUtilization: 0.9, maxHeapUsedBytes: 1e9, maxRssBytes: 1e9 }); })`;
  const r = spawnSync(process.execPath, ['-e', code], { timeout: 10_000, encoding: 'utf8' });
  assert.equal(r.error, undefined, 'the child exits before the timeout');
  assert.equal(r.status, 0, r.stderr);
});

function fakeReq(url: string): IncomingMessage {
  return { url, headers: {} } as IncomingMessage;
}

test('exempt paths, patterns and predicates are never shed; others are, and counted', async (t) => {
  // A 1-byte heap limit trips at the first sample window, so every request is due to be shed.
  const paths = protect({ maxHeapUsedBytes: 1, sampleInterval: 20, exempt: ['/health', /^\/metrics/] });
  const pred = protect({ maxHeapUsedBytes: 1, sampleInterval: 20, exempt: (req) => req.headers['x-probe'] === '1' });
  t.after(() => { paths.close(); pred.close(); });
  while (!paths.isUnderPressure() || !pred.isUnderPressure()) await new Promise((r) => setTimeout(r, 20));
  assert.equal(paths.shouldShed(fakeReq('/health?full=1')), null);
  assert.equal(paths.shouldShed(fakeReq('/metrics/prom')), null);
  assert.equal(paths.shouldShed(fakeReq('/api')), 'heapUsedBytes');
  assert.equal(paths.status().shed, 1);
  const probe = { url: '/x', headers: { 'x-probe': '1' } } as unknown as IncomingMessage;
  assert.equal(pred.shouldShed(probe), null);
  assert.equal(pred.shouldShed(fakeReq('/x')), 'heapUsedBytes');
});

test('an onPressure handler that throws gets the default 503 sent instead, and one warning', async (t) => {
  const { createServer, get } = await import('node:http');
  const guard = protect({ maxEventLoopDelay: 0, maxHeapUsedBytes: 1, sampleInterval: 20, onPressure: () => { throw new Error('boom'); } });
  const server = createServer(guard.http((_req, res) => { res.end('served'); }));
  t.after(() => { guard.close(); server.close(); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  while (!guard.isUnderPressure()) await new Promise((r) => setTimeout(r, 20));
  const warning = new Promise<Error>((resolve) => process.once('warning', resolve));
  const port = (server.address() as { port: number }).port;
  const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
  assert.equal(reply.status, 503);
  assert.match(reply.body, /heap used/);
  assert.match((await warning).message, /onPressure threw: boom/);
});
