import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { load } from '../../src/load/load.js';
import { httpServer, rawServer, OK, type TestServer } from './helpers/servers.js';

async function withServer<T>(server: Promise<TestServer>, fn: (s: TestServer) => Promise<T>): Promise<T> {
  const s = await server;
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

const sumValues = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);

test('Content-Length responses: the generator counts exactly what the server answered, across two workers', () =>
  withServer(
    rawServer(() => OK),
    async (s) => {
      const r = await load({ url: s.url, amount: 2000, connections: 10, workers: 2 });
      assert.equal(r.requests.total, 2000);
      assert.equal(s.requests, 2000);
      assert.deepEqual(r.statusCodes, { 200: 2000 });
      assert.equal(r.latency.count, 2000);
      assert.equal(r.errors.total, 0);
      assert.equal(r.generator.workers.length, 2);
      assert.equal(r.throughput.bytesRead, 2000 * Buffer.byteLength(OK));
    },
  ));

test('chunked responses with trailers are counted exactly', () => {
  const body = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n10\r\n0123456789abcdef\r\n0\r\nX-T: 1\r\n\r\n';
  return withServer(
    rawServer(() => body),
    async (s) => {
      const r = await load({ url: s.url, amount: 1000, connections: 5, workers: 1 });
      assert.equal(r.requests.total, 1000);
      assert.equal(s.requests, 1000);
      assert.equal(r.errors.parse, 0);
    },
  );
});

test('close-delimited bodies end at the close and each needs a new connection', () =>
  withServer(
    rawServer((_p, _i, socket) => {
      socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close');
      return null;
    }),
    async (s) => {
      const r = await load({ url: s.url, amount: 100, connections: 4, workers: 1 });
      assert.equal(r.requests.total, 100);
      assert.equal(s.requests, 100);
      assert.equal(r.statusCodes['200'], 100);
      assert.ok(r.connections.opened >= 100, `opened ${r.connections.opened}`);
      assert.equal(r.errors.total, 0);
    },
  ));

test('pipelined responses are matched to their requests in order and counted exactly', () =>
  withServer(
    rawServer((path) => (path === '/' ? OK : 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n')),
    async (s) => {
      const r = await load({ url: s.url, amount: 3000, connections: 4, pipelining: 10, workers: 1 });
      assert.equal(r.requests.total, 3000);
      assert.equal(s.requests, 3000);
      assert.equal(r.requests.sent, 3000);
      assert.deepEqual(r.statusCodes, { 200: 3000 });
    },
  ));

test('1xx interim responses are skipped, only the final status counts', () =>
  withServer(
    rawServer(() => 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n' + OK),
    async (s) => {
      const r = await load({ url: s.url, amount: 500, connections: 5, workers: 1 });
      assert.deepEqual(r.statusCodes, { 200: 500 });
      assert.equal(s.requests, 500);
    },
  ));

test("the server's Connection: close makes the generator reconnect", () =>
  withServer(
    httpServer((_req, res) => {
      res.setHeader('Connection', 'close');
      res.end('bye');
    }),
    async (s) => {
      const r = await load({ url: s.url, amount: 150, connections: 3, workers: 1 });
      assert.equal(r.requests.total, 150);
      assert.equal(s.requests, 150);
      assert.equal(s.connections, r.connections.opened + 1, 'one more: the pre-flight check');
      assert.equal(r.connections.opened, 150);
      assert.ok(r.connections.closedByServer >= 149, `closedByServer ${r.connections.closedByServer}`);
      assert.equal(r.errors.total, 0);
    },
  ));

test('--no-keepalive opens one connection per request', () =>
  withServer(
    httpServer((_req, res) => res.end('hi')),
    async (s) => {
      const r = await load({ url: s.url, amount: 200, connections: 4, workers: 1, keepalive: false });
      assert.equal(r.requests.total, 200);
      assert.equal(s.requests, 200);
      assert.equal(s.connections, 201, 'one per request and the pre-flight check');
      assert.equal(r.connections.opened, 200);
    },
  ));

test('timeouts are counted and kept in the latency histogram at the timeout value', () =>
  withServer(
    rawServer(() => null),
    async (s) => {
      const r = await load({ url: s.url, amount: 6, connections: 2, workers: 1, timeout: 150 });
      assert.equal(r.requests.total, 0);
      assert.equal(r.errors.timeouts, 6);
      assert.equal(r.errors.total, 6);
      assert.equal(r.latency.count, 6);
      assert.ok(r.latency.min >= 149, `min ${r.latency.min}`);
      assert.ok(r.latency.max <= 151, `max ${r.latency.max}`);
    },
  ));

test('connection resets are counted by errno', () =>
  withServer(
    rawServer((_p, _i, socket) => {
      socket.resetAndDestroy();
      return null;
    }),
    async (s) => {
      const r = await load({ url: s.url, amount: 20, connections: 2, workers: 1 });
      assert.equal(r.requests.total, 0);
      assert.equal(sumValues(r.errors.byCode), 20);
      assert.ok((r.errors.byCode.ECONNRESET ?? 0) > 0, JSON.stringify(r.errors.byCode));
      assert.equal(s.requests, 20);
    },
  ));

test('Unix socket targets work, the URL still giving Host and path', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-load-'));
  const socket = join(dir, 's.sock');
  const hosts = new Set<string>();
  return withServer(
    httpServer((req, res) => {
      hosts.add(String(req.headers.host));
      res.end(req.url);
    }, socket),
    async (s) => {
      const r = await load({ url: 'http://example.test/hello?x=1', socket, amount: 300, connections: 3, workers: 1 });
      assert.equal(r.requests.total, 300);
      assert.equal(s.requests, 300);
      assert.deepEqual([...new Set(s.paths)], ['/hello?x=1']);
      assert.deepEqual([...hosts], ['example.test']);
      assert.match(r.url, /^unix:/);
    },
  ).finally(() => rmSync(dir, { recursive: true, force: true }));
});

test('a scenario is sent in order on each connection, after the setup requests', () =>
  withServer(
    rawServer(() => OK),
    async (s) => {
      const r = await load({
        url: s.url,
        amount: 9,
        connections: 1,
        workers: 1,
        requests: [{ path: '/a' }, { method: 'POST', path: '/b', body: '{"x":1}' }, { path: '/c' }],
        setup: [{ method: 'POST', path: '/setup' }],
      });
      assert.deepEqual(s.paths, ['/setup', '/a', '/b', '/c', '/a', '/b', '/c', '/a', '/b', '/c']);
      assert.equal(r.requests.total, 9);
      assert.deepEqual(r.setup, [{ method: 'POST', path: '/setup', status: 200 }]);
      assert.equal(r.options.scenario, 3);
    },
  ));

test('a timed run accounts for every request, reports a timeline, and the hdr log reads back', () =>
  withServer(
    httpServer((_req, res) => res.end('hello')),
    async (s) => {
      const dir = mkdtempSync(join(tmpdir(), 'hotpath-hdr-'));
      const logPath = join(dir, 'run.hlog');
      try {
        const phases: string[] = [];
        const progress: number[] = [];
        const run = load({ url: s.url, duration: 1.5, warmup: 0.3, connections: 8, workers: 1, hdrLog: logPath });
        run.on('progress', (p) => progress.push(p.second));
        run.on('warmup-start', () => phases.push('warmup-start'));
        run.on('load-start', () => phases.push('load-start'));
        run.on('load-end', () => phases.push('load-end'));
        const r = await run;
        assert.deepEqual(phases, ['warmup-start', 'load-start', 'load-end']);
        assert.ok(r.requests.total > 0);
        assert.ok(r.requests.total + r.requests.inFlightAtEnd <= r.requests.sent + 8, 'answered + in flight ≤ sent (+ warm-up leftovers)');
        assert.ok(s.requests >= r.requests.total);
        assert.ok(r.timeline.length >= 1);
        assert.equal(
          r.timeline.reduce((a, p) => a + p.requests, 0),
          r.requests.total,
        );
        assert.ok(progress.length >= 1);
        const reader = new hdr.HistogramLogReader(readFileSync(logPath, 'utf8'));
        let count = 0;
        for (let h = reader.nextIntervalHistogram(); h !== null; h = reader.nextIntervalHistogram()) count += h.totalCount;
        assert.equal(count, r.latency.count);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  ));

test('an AbortSignal stops the run early and resolves with what was measured', () =>
  withServer(
    httpServer((_req, res) => res.end('ok')),
    async (s) => {
      const controller = new AbortController();
      const run = load({ url: s.url, duration: 30, connections: 4, workers: 1, signal: controller.signal });
      run.on('progress', () => controller.abort('enough'));
      const r = await run;
      assert.deepEqual(r.stoppedEarly, { reason: 'enough' });
      assert.ok(r.requests.total > 0);
      assert.ok(r.generator.warnings.some((w) => w.includes('Stopped early')));
    },
  ));

test('warm-up requests are left out: an exact amount after warm-up is exactly that many', () =>
  withServer(
    httpServer((_req, res) => res.end('ok')),
    async (s) => {
      const r = await load({ url: s.url, warmup: 0.5, amount: 400, connections: 4, workers: 1, pipelining: 2 });
      assert.equal(r.requests.total, 400);
      assert.equal(r.requests.sent, 400);
      assert.equal(r.latency.count, 400);
      assert.ok(s.requests > 400, 'the server also saw the warm-up');
    },
  ));

test('a server that dies mid-run: refused reconnects are counted and paced, and the run still reports', async () => {
  const s = await httpServer((_req, res) => res.end('ok'));
  const run = load({ url: s.url, duration: 1.5, connections: 4, workers: 1 });
  run.on('load-start', () => setTimeout(() => void s.close(), 400));
  const r = await run;
  assert.ok(r.requests.total > 0);
  const refused = r.errors.byCode.ECONNREFUSED ?? 0;
  assert.ok(refused > 0, JSON.stringify(r.errors.byCode));
  assert.ok(refused < 1000, `reconnects are paced, not spun: ${refused}`);
});

test('pipelined requests the server drops by closing are counted as EOF errors, never lost silently', () =>
  withServer(
    rawServer((_p, i, socket) => {
      if (i % 4 === 3) {
        socket.end(OK.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'));
        return null;
      }
      return OK;
    }),
    async (s) => {
      const r = await load({ url: s.url, duration: 0.5, connections: 2, pipelining: 8, workers: 1 });
      assert.ok(r.requests.total > 0);
      assert.ok((r.errors.byCode.EOF ?? 0) > 0, JSON.stringify(r.errors));
      assert.ok(r.connections.closedByServer > 0);
    },
  ));

test('an open-model hdr log holds the corrected latency untagged and the service time tagged "service"', () =>
  withServer(
    httpServer((_req, res) => res.end('ok')),
    async (s) => {
      const dir = mkdtempSync(join(tmpdir(), 'hotpath-hdr-'));
      const logPath = join(dir, 'open.hlog');
      try {
        const r = await load({ url: s.url, rate: 300, duration: 1.2, connections: 3, workers: 1, hdrLog: logPath });
        const reader = new hdr.HistogramLogReader(readFileSync(logPath, 'utf8'));
        const counts: Record<string, number> = {};
        for (let h = reader.nextIntervalHistogram(); h !== null; h = reader.nextIntervalHistogram()) {
          const tag = h.tag === 'service' ? 'service' : 'latency';
          counts[tag] = (counts[tag] ?? 0) + h.totalCount;
        }
        assert.deepEqual(counts, { latency: r.latency.count, service: r.serviceTime?.count });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  ));
