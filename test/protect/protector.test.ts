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
  t.after(() => {
    paths.close();
    pred.close();
  });
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
  const guard = protect({
    maxEventLoopDelay: 0,
    maxHeapUsedBytes: 1,
    sampleInterval: 20,
    onPressure: () => {
      throw new Error('boom');
    },
  });
  const server = createServer(
    guard.http((_req, res) => {
      res.end('served');
    }),
  );
  t.after(() => {
    guard.close();
    server.close();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  while (!guard.isUnderPressure()) await new Promise((r) => setTimeout(r, 20));
  const warning = new Promise<Error>((resolve) => process.once('warning', resolve));
  const port = (server.address() as { port: number }).port;
  const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (c: string) => {
          body += c;
        })
        .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
  assert.equal(reply.status, 503);
  assert.match(reply.body, /heap used/);
  assert.match((await warning).message, /onPressure threw: boom/);
});

async function overloadedServer(t: import('node:test').TestContext, options: Parameters<typeof protect>[0]) {
  const { createServer } = await import('node:http');
  const guard = protect({ maxHeapUsedBytes: 1, sampleInterval: 20, ...options });
  const server = createServer(
    guard.http((_req, res) => {
      res.end('served');
    }),
  );
  t.after(() => {
    guard.close();
    server.close();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  while (!guard.isUnderPressure()) await new Promise((r) => setTimeout(r, 20));
  return { guard, port: (server.address() as { port: number }).port };
}

async function getReply(port: number, path = '/'): Promise<{ status: number; body: string }> {
  const { get } = await import('node:http');
  return new Promise((resolve, reject) => {
    // A server whose handler threw never answers: fail, do not hang.
    get({ host: '127.0.0.1', port, path, agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (c: string) => {
          body += c;
        })
        .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .on('timeout', () => reject(new Error('no answer in 5 s')));
  });
}

test('issue 23.8: an exempt function that throws does not crash the server: not exempt, one warning', async (t) => {
  let calls = 0;
  const { guard, port } = await overloadedServer(t, {
    exempt: () => {
      calls++;
      throw new Error('exempt boom');
    },
  });
  const warnings: Error[] = [];
  const onWarning = (w: Error) => {
    if (w.name === 'HotpathProtectWarning') warnings.push(w);
  };
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const first = await getReply(port);
  const second = await getReply(port);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual([first.status, second.status], [503, 503], 'treated as not exempt: shed');
  assert.equal(calls, 2);
  assert.equal(warnings.length, 1, 'warned once');
  assert.match(warnings[0].message, /exempt function threw: exempt boom/);
  assert.equal(guard.status().shed, 2);
});

test('issue 23.8: an exempt function that returns a truthy value exempts; a /g pattern matches every time', async (t) => {
  const pred = protect({ maxHeapUsedBytes: 1, sampleInterval: 20, exempt: (req) => req.headers['x-probe'] as unknown as boolean });
  const global = protect({ maxHeapUsedBytes: 1, sampleInterval: 20, exempt: [/^\/health/g] });
  t.after(() => {
    pred.close();
    global.close();
  });
  while (!pred.isUnderPressure() || !global.isUnderPressure()) await new Promise((r) => setTimeout(r, 20));
  const probe = { url: '/x', headers: { 'x-probe': 'yes' } } as unknown as IncomingMessage;
  assert.equal(pred.shouldShed(probe), null);
  for (let i = 0; i < 4; i++) assert.equal(global.shouldShed(fakeReq('/health')), null, `call ${i}`);
});

test('issue 23.8: an onPressure handler that answers and returns null (not a promise) keeps its answer', async (t) => {
  const { port } = await overloadedServer(t, {
    onPressure: ((_req: IncomingMessage, res: import('node:http').ServerResponse) => {
      res.statusCode = 429;
      res.end('slow down');
      return null;
    }) as never,
  });
  const warnings: Error[] = [];
  const onWarning = (w: Error) => {
    if (w.name === 'HotpathProtectWarning') warnings.push(w);
  };
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const reply = await getReply(port);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(reply, { status: 429, body: 'slow down' });
  assert.deepEqual(
    warnings.map((w) => w.message),
    [],
    'a handler that answered did not fail',
  );
});
