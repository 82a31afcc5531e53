import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ioWait } from '../../src/analyze/io-wait.js';
import { awaitedCallee, awaitedOn, calleeBefore } from '../../src/analyze/signals/slot-wait.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

for (const noise of NOISE_LEVELS) {
  test(`io-wait: 80 ms requests on an idle loop, waiting on outgoing sockets (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, rps: 600, elu: 0.15, cores: 0.15, latencyMs: 80, resources: { TCPSocketWrap: 100 } });
      const [f] = ioWait(run);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.category, 'io-wait');
      assert.ok((f.evidence.waitShare as number) > 0.9);
      assert.equal((f.evidence.awaiting as { type: string }[])[0].type, 'TCPSocketWrap');
    }
  });

  test(`io-wait: fast requests on an idle loop, and slow requests on a busy loop, are not I/O wait (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      assert.deepEqual(ioWait(syntheticRun({ seed, noise, rps: 600, elu: 0.1, latencyMs: 1.2 })), []);
      assert.deepEqual(ioWait(syntheticRun({ seed, noise, rps: 100, elu: 0.98, cores: 1, latencyMs: 400 })), []);
    }
  });
}

test('io-wait: on a CPU-starved machine the CPU actually used, not the inflated ELU, says the loop was idle', () => {
  const [f] = ioWait(syntheticRun({ rps: 300, elu: 0.6, cores: 0.15, latencyMs: 60 }));
  assert.equal(f?.category, 'io-wait');
});

const executor = { function: '(anonymous)', file: '/app/lib/pricing.js', line: 10, column: 18 };
const fetchQuote = { function: 'fetchQuote', file: '/app/lib/pricing.js', line: 9, column: 10 };
const handler = { function: 'quote', file: '/app/server.js', line: 12, column: 27 };
const client = { function: 'request', file: '/app/node_modules/got/dist/index.js', line: 40, column: 3 };

for (const noise of NOISE_LEVELS) {
  test(`io-wait: the app code whose outgoing calls hold most of the request time is the culprit (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // 80 ms requests, one 75 ms upstream call each: the upstream explains ~94 % of request time.
      const run = syntheticRun({
        seed,
        noise,
        rps: 600,
        elu: 0.15,
        cores: 0.15,
        latencyMs: 80,
        resources: { TCPSocketWrap: 100 },
        cwd: '/app',
        outgoing: [
          { api: 'http', origin: 'http://pricing:8080', perRequest: 1, msEach: 75, site: executor, stack: [executor, fetchQuote, handler] },
        ],
      });
      const [f] = ioWait(run);
      assert.equal(f?.category, 'io-wait', `seed ${seed}`);
      // The anonymous Promise executor is named by the function that created it.
      assert.deepEqual(f.culprit, { function: 'fetchQuote', file: 'lib/pricing.js', line: 9, column: 10 });
      assert.equal((f.evidence.upstream as { origin: string }).origin, 'http://pricing:8080');
    }
  });
}

test('io-wait: a client library in node_modules is skipped to the app code that called it', () => {
  const run = syntheticRun({
    rps: 600,
    elu: 0.15,
    cores: 0.15,
    latencyMs: 80,
    cwd: '/app',
    outgoing: [{ api: 'http', origin: 'http://pricing:8080', perRequest: 1, msEach: 75, site: client, stack: [client, handler] }],
  });
  assert.deepEqual(ioWait(run)[0]?.culprit, { function: 'quote', file: 'server.js', line: 12, column: 27 });
});

test('io-wait: outgoing calls that explain little of the wait name no culprit', () => {
  // 80 ms requests; a 5 ms call per request explains ~6 %: something else is awaited.
  const run = syntheticRun({
    rps: 600,
    elu: 0.15,
    cores: 0.15,
    latencyMs: 80,
    cwd: '/app',
    outgoing: [{ api: 'fetch', origin: 'http://cache:6379', perRequest: 1, msEach: 5, site: fetchQuote, stack: [fetchQuote] }],
  });
  const [f] = ioWait(run);
  assert.equal(f?.category, 'io-wait');
  assert.equal(f.culprit, undefined);
  assert.equal(f.evidence.upstream, undefined);
});

test('io-wait: timers that run out on the request path are named, and several per request adding up to the latency are waited one after another', () => {
  const timer = { function: '(anonymous)', file: '/app/lib/aggregate.js', line: 5, column: 40 };
  const callDownstream = { function: 'callDownstream', file: '/app/lib/aggregate.js', line: 5, column: 10 };
  const buildDashboard = { function: 'buildDashboard', file: '/app/lib/aggregate.js', line: 13, column: 26 };
  const stack = [timer, callDownstream, buildDashboard];
  // Five 20 ms timeouts per request, one after another: 100 ms requests (50 connections: 500 req/s).
  const run = syntheticRun({
    rps: 500,
    elu: 0.05,
    cores: 0.05,
    latencyMs: 100,
    resources: { Timeout: 20 },
    cwd: '/app',
    timerGrowth: [{ kind: 'timeout', perRequest: 5, clearedShare: 0, firedShare: 1, delayMs: 20, site: timer, stack }],
  });
  const [f] = ioWait(run);
  assert.deepEqual(f.culprit, { function: 'callDownstream', file: 'lib/aggregate.js', line: 5, column: 10 });
  assert.equal(f.title, 'Requests spend their time waiting for timers');
  assert.equal(f.evidence.sequential, true);
  assert.deepEqual(f.evidence.awaitedIn, { function: 'buildDashboard', file: 'lib/aggregate.js', line: 13, column: 26 });
  assert.match(f.summary, /one after another, in buildDashboard \(lib\/aggregate\.js:13\)/);
  assert.match(f.recommendation, /Promise\.all/);
  // The same five started together: 22 ms requests. Still the timers' wait, not in sequence.
  const together = syntheticRun({
    rps: 2000,
    elu: 0.05,
    cores: 0.05,
    latencyMs: 22,
    resources: { Timeout: 20 },
    cwd: '/app',
    timerGrowth: [{ kind: 'timeout', perRequest: 5, clearedShare: 0, firedShare: 1, delayMs: 20, site: timer, stack }],
  });
  const [g] = ioWait(together);
  assert.equal(g.culprit?.function, 'callDownstream');
  assert.equal(g.evidence.sequential, undefined);
  assert.doesNotMatch(g.recommendation, /one after another/);
  // Guards that the answer beats (cleared) delay nobody: no culprit.
  const guards = syntheticRun({
    rps: 500,
    elu: 0.05,
    cores: 0.05,
    latencyMs: 100,
    resources: { Timeout: 20 },
    cwd: '/app',
    timerGrowth: [{ kind: 'timeout', perRequest: 1, clearedShare: 1, delayMs: 5000, site: timer, stack }],
  });
  assert.equal(ioWait(guards)[0].culprit, undefined);
});

test('io-wait: three outgoing calls per request that add up to the latency are waited one after another', () => {
  const run = syntheticRun({
    rps: 500,
    elu: 0.15,
    cores: 0.15,
    latencyMs: 95,
    resources: { TCPSocketWrap: 60 },
    cwd: '/app',
    outgoing: [
      { api: 'fetch', origin: 'http://inventory:8080', perRequest: 3, msEach: 30, site: executor, stack: [executor, fetchQuote, handler] },
    ],
  });
  const [f] = ioWait(run);
  assert.equal(f.culprit?.function, 'fetchQuote');
  assert.equal(f.evidence.sequential, true);
  assert.equal((f.evidence.awaitedIn as { function: string }).function, 'quote');
});

test('io-wait: requests that queue for a few steady waits (a pool of 2) are told so, with the code that makes the waits', () => {
  const timer = { function: 'runOnConnection', file: '/app/lib/db.js', line: 27, column: 10 };
  const query = { function: 'query', file: '/app/lib/db.js', line: 35, column: 22 };
  const stack = [timer, query];
  // 50 requests in flight, 390 req/s (128 ms each), one 5 ms timer per request: 2 timers at a time, always 2.
  const pool = syntheticRun({
    rps: 390,
    elu: 0.03,
    cores: 0.03,
    latencyMs: 128,
    resources: { Timeout: 2 },
    cwd: '/app',
    timerGrowth: [{ kind: 'timeout', perRequest: 1, clearedShare: 0, firedShare: 1, delayMs: 5, site: timer, stack }],
  });
  const [f] = ioWait(pool);
  assert.match(f.title, /queue for a limited resource/);
  assert.equal(f.culprit?.function, 'runOnConnection');
  assert.equal(f.evidence.queuedBehind, 2);
  assert.match(f.summary, /behind a pool or a lock of about 2\. They are made from query \(lib\/db\.js:35\)/);
  assert.match(f.recommendation, /connection pool/);
  // The same timers without a steady count (none in flight at some samples): no queue is inferred.
  const unsteady = syntheticRun({
    rps: 390,
    elu: 0.03,
    cores: 0.03,
    latencyMs: 128,
    resources: { Timeout: 2 },
    cwd: '/app',
    resourcesAt: (p) => ({ Timeout: Math.floor(p * 100) % 3 === 0 ? 0 : 4 }),
    timerGrowth: [{ kind: 'timeout', perRequest: 1, clearedShare: 0, firedShare: 1, delayMs: 5, site: timer, stack }],
  });
  const [g] = ioWait(unsteady);
  assert.equal(g.evidence.queuedBehind, undefined);
  assert.equal(g.culprit, undefined);
});

const authorize = { function: 'authorize', file: '/app/lib/payments.js', line: 12, column: 10 };
const checkout = { function: 'checkout', file: '/app/server.js', line: 30, column: 5 };

for (const noise of NOISE_LEVELS) {
  test(`io-wait: node:http calls that wait in their http.Agent's queue blame its socket limit, not the upstream (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // 50 requests in flight, 250 ms each, one 240 ms call each: 216 ms of it waiting for one of 4 sockets.
      const run = syntheticRun({
        seed,
        noise,
        rps: 200,
        elu: 0.1,
        cores: 0.1,
        latencyMs: 250,
        cwd: '/app',
        outgoing: [
          {
            api: 'http',
            origin: 'http://payments:8080',
            perRequest: 1,
            msEach: 240,
            site: authorize,
            stack: [authorize, checkout],
            queuedShare: 0.97,
            socketWaitShare: 0.9,
            maxSockets: 4,
            newConnectionShare: 0,
          },
        ],
      });
      const [f] = ioWait(run);
      assert.equal(f?.title, 'Requests queue for the 4 sockets of the http.Agent that calls http://payments:8080', `seed ${seed}`);
      assert.equal(f.culprit?.function, 'authorize');
      const upstream = f.evidence.upstream as Record<string, number>;
      assert.equal(upstream.queuedMs, 216);
      assert.equal(upstream.onSocketMs, 24);
      assert.equal(upstream.maxSockets, 4);
      assert.equal(f.evidence.queuedBehind, 4);
      assert.match(
        f.summary,
        /waited in its queue: 216 ms a call waiting for a socket, 24 ms on it until the answer\. The upstream answers in about 24 ms/,
      );
      assert.match(f.recommendation, /Raise `maxSockets`/);
      assert.equal(f.evidence.sequential, undefined);
    }
  });
}

test("io-wait: node:http calls that got their socket at once are the upstream's wait, split into the two parts", () => {
  const run = syntheticRun({
    seed: 3,
    rps: 200,
    elu: 0.1,
    cores: 0.1,
    latencyMs: 250,
    cwd: '/app',
    outgoing: [
      {
        api: 'http',
        origin: 'http://payments:8080',
        perRequest: 1,
        msEach: 240,
        site: authorize,
        stack: [authorize, checkout],
        queuedShare: 0,
        socketWaitShare: 0.01,
        newConnectionShare: 0,
      },
    ],
  });
  const [f] = ioWait(run);
  assert.equal(f.title, 'Requests spend their time waiting for http://payments:8080');
  assert.equal((f.evidence.upstream as Record<string, number>).onSocketMs, 237.6);
  assert.doesNotMatch(f.recommendation, /maxSockets/);
});

const fetchConfig = { function: 'fetchConfig', file: '/app/lib/config.js', line: 14, column: 10 };
const inGetConfig = { function: '(anonymous)', file: '/app/lib/config.js', line: 29, column: 21 };
const runExclusive = { function: 'runExclusive', file: '/app/lib/mutex.js', line: 10, column: 24 };

for (const noise of NOISE_LEVELS) {
  test(`io-wait: a call site held at one call in flight while many requests wait is a lock they queue for (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // 50 requests in flight, 250 ms each (200 req/s); one 4.75 ms call per request, one at a time: 95 % of the time one in flight.
      const lock = syntheticRun({
        seed,
        noise,
        rps: 200,
        elu: 0.12,
        cores: 0.12,
        latencyMs: 250,
        cwd: '/app',
        resources: { PipeWrap: 2, ProcessWrap: 1 },
        resourcesAtRest: { PipeWrap: 2, ProcessWrap: 1, TCPServerWrap: 1 },
        outgoing: [
          {
            api: 'http',
            origin: 'http://config:8080',
            perRequest: 1,
            msEach: 4.75,
            site: fetchConfig,
            stack: [fetchConfig, inGetConfig, runExclusive],
            queuedShare: 0,
            socketWaitShare: 0.05,
            concurrency: [0.05, 0.95],
          },
        ],
      });
      const [f] = ioWait(lock);
      assert.match(f?.title ?? '', /queue for a limited resource/, `seed ${seed}`);
      assert.equal(f.culprit?.function, 'fetchConfig');
      assert.ok(Math.abs((f.evidence.queuedBehind as number) - 0.95) <= 0.2, String(f.evidence.queuedBehind));
      assert.match(
        f.summary,
        /one at a time, as behind a lock or a single connection\. They are made from \(anonymous\) \(lib\/config\.js:29\), called from runExclusive \(lib\/mutex\.js:10\)/,
      );
      // The child process's pipes were there before the load: the process's own, not a wait.
      assert.equal(
        (f.evidence.awaiting as { type: string }[] | undefined)?.some((a) => a.type === 'PipeWrap' || a.type === 'ProcessWrap') ?? false,
        false,
      );
      assert.doesNotMatch(f.summary, /PipeWrap/);
      assert.match(f.recommendation, /mutex/);
    }
  });
}

test('io-wait: calls whose number in flight comes and goes with the requests are no queue', () => {
  // The same calls, about 1 in flight on average but idle 40 % of the time and up to 4 at once.
  const run = syntheticRun({
    seed: 1,
    rps: 200,
    elu: 0.12,
    cores: 0.12,
    latencyMs: 250,
    cwd: '/app',
    outgoing: [
      {
        api: 'http',
        origin: 'http://config:8080',
        perRequest: 1,
        msEach: 4.75,
        site: fetchConfig,
        stack: [fetchConfig, inGetConfig],
        concurrency: [0.4, 0.35, 0.15, 0.07, 0.03],
      },
    ],
  });
  const [f] = ioWait(run);
  assert.equal(f.category, 'io-wait');
  assert.equal(f.evidence.queuedBehind, undefined);
  assert.equal(f.culprit, undefined);
  // Steady at one, but a call as long as the request itself: requests wait in it, not before it.
  const long = syntheticRun({
    seed: 1,
    rps: 200,
    elu: 0.12,
    cores: 0.12,
    latencyMs: 60,
    cwd: '/app',
    outgoing: [{ api: 'http', origin: 'http://config:8080', perRequest: 0.6, msEach: 30, site: fetchConfig, concurrency: [0.05, 0.95] }],
  });
  assert.equal(ioWait(long)[0].evidence.queuedBehind, undefined);
});

test('io-wait: requests queued for a pool whose waiters are callbacks name the call that hands out the slot', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-slot-cb-'));
  writeFileSync(
    join(dir, 'server.js'),
    [
      "'use strict';",
      'const pool = { free: 2, waiters: [] };',
      'function acquire(cb) {',
      '  if (pool.free > 0) { pool.free--; cb(); } else pool.waiters.push(cb);',
      '}',
      'function fetchRates(cb) {',
      '  setTimeout(cb, 7);',
      '}',
      'function withSlot(cb) {',
      '  acquire(() => fetchRates(() => { release(); cb(); }));',
      '}',
    ].join('\n'),
  );
  const file = join(dir, 'server.js');
  const timer = { function: 'fetchRates', file, line: 7, column: 3, functionLine: 6, functionColumn: 20 };
  const callback = { function: '', file, line: 10, column: 17, functionLine: 10, functionColumn: 11 };
  const gate = { function: 'acquire', file, line: 4, column: 37, functionLine: 3, functionColumn: 17 };
  const withSlot = { function: 'withSlot', file, line: 10, column: 3, functionLine: 9, functionColumn: 18 };
  const run = syntheticRun({
    rps: 260,
    elu: 0.03,
    cores: 0.03,
    latencyMs: 128,
    resources: { Timeout: 2 },
    cwd: dir,
    timerGrowth: [
      { kind: 'timeout', perRequest: 1, clearedShare: 0, firedShare: 1, delayMs: 7, site: timer, stack: [timer, callback, gate, withSlot] },
    ],
  });
  const [f] = ioWait(run);
  assert.equal(f.evidence.poolSize, 2);
  assert.equal((f.evidence.waitsAt as { awaited: string }).awaited, 'acquire(callback)');
  assert.deepEqual(f.culprit, { function: 'withSlot', file: 'server.js', line: 10, column: 1 });
  assert.equal((f.evidence.slotHeldBy as { function: string }).function, 'fetchRates');
  assert.match(f.summary, /Requests wait for a slot at `acquire\(callback\)` in withSlot \(server\.js:10\)/);
  // The callback called by something else than the function it was handed to (a router, forEach): no gate.
  assert.equal(calleeBefore('  app.get("/q", (req, res) => {', 17), 'app.get');
  assert.equal(calleeBefore('  pool.acquire(function (err, conn) {', 16), 'pool.acquire');
  assert.equal(calleeBefore('  const x = 1; return (a) => a;', 23), undefined);
  rmSync(dir, { recursive: true, force: true });
});

test('io-wait: pipes and timers the process held before the load are not named as what requests wait on', () => {
  const run = syntheticRun({
    rps: 600,
    elu: 0.15,
    cores: 0.15,
    latencyMs: 80,
    resources: { PipeWrap: 3, Timeout: 2 },
    resourcesAtRest: { PipeWrap: 3, Timeout: 2 },
  });
  const [f] = ioWait(run);
  assert.equal(f.evidence.awaiting, undefined);
  // Without a reading at rest they are all there is to name.
  const unknown = syntheticRun({ rps: 600, elu: 0.15, cores: 0.15, latencyMs: 80, resources: { PipeWrap: 3, Timeout: 2 } });
  assert.equal((ioWait(unknown)[0].evidence.awaiting as { type: string }[])[0].type, 'PipeWrap');
});

test('io-wait: requests queued for a pool name where they await a slot, how many wait and the pool size, with the I/O that holds the slot', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-slot-'));
  mkdirSync(join(dir, 'lib'));
  writeFileSync(
    join(dir, 'lib', 'db.js'),
    [
      "'use strict';",
      'async function query(pool, sql) {',
      '  const conn = await pool.acquire(); // a slot of the pool',
      '  try {',
      '    return await runSql(conn, sql);',
      '  } finally { pool.release(conn); }',
      '}',
      'function runSql(conn, sql) {',
      '  return new Promise((resolve) => setTimeout(resolve, 7, sql));',
      '}',
    ].join('\n'),
  );
  const timer = { function: 'runSql', file: join(dir, 'lib/db.js'), line: 9, column: 35, functionLine: 8, functionColumn: 1 };
  const query = { function: 'query', file: join(dir, 'lib/db.js'), line: 5, column: 24, functionLine: 2, functionColumn: 1 };
  // 50 requests in flight, 390 req/s, one 5 ms timer per request held at 3 at a time.
  const pool = syntheticRun({
    rps: 390,
    elu: 0.03,
    cores: 0.03,
    latencyMs: 128,
    resources: { Timeout: 3 },
    cwd: dir,
    timerGrowth: [{ kind: 'timeout', perRequest: 1, clearedShare: 0, firedShare: 1, delayMs: 7, site: timer, stack: [timer, query] }],
  });
  const [f] = ioWait(pool);
  assert.match(f.title, /queue for a slot of a limited resource \(about 3 at a time\), not for the I\/O/);
  assert.deepEqual(f.culprit, { function: 'query', file: 'lib/db.js', line: 3, column: 1 });
  assert.equal(f.evidence.poolSize, 3);
  assert.ok(Math.abs((f.evidence.waitingForSlot as number) - 47) <= 1, String(f.evidence.waitingForSlot));
  assert.equal((f.evidence.waitsAt as { awaited: string }).awaited, 'pool.acquire()');
  assert.equal((f.evidence.slotHeldBy as { function: string }).function, 'runSql');
  assert.match(
    f.summary,
    /Requests wait for a slot at `await pool\.acquire\(\)` in query \(lib\/db\.js:3\): about 47 waiting on average for 3 slots\./,
  );
  rmSync(dir, { recursive: true, force: true });
});

test('io-wait: requests queued in a limiter that takes the I/O as a task name the awaited call that hands it over', () => {
  // A p-limit-like limiter of 2: the task runs later, from the limiter's own queue (`next`), not from `limit`.
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-slot-task-'));
  mkdirSync(join(dir, 'lib'));
  writeFileSync(
    join(dir, 'lib', 'limit.js'),
    [
      "'use strict';",
      'function createLimiter(max) {',
      '  let active = 0;',
      '  const queue = [];',
      '  const next = () => {',
      '    if (active >= max || queue.length === 0) return;',
      '    active++;',
      '    const { task, resolve } = queue.shift();',
      '    task().then(resolve).finally(() => { active--; next(); });',
      '  };',
      '  return (task) => new Promise((resolve) => { queue.push({ task, resolve }); next(); });',
      '}',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'lib', 'profiles.js'),
    [
      "'use strict';",
      "const limit = require('./limit').createLimiter(2);",
      'function lookup(id) {',
      '  return new Promise((resolve) => setTimeout(resolve, 7, id));',
      '}',
      'async function enrichUser(user) {',
      '  const profile = await limit(() => lookup(user.id));',
      '  return { ...user, profile };',
      '}',
    ].join('\n'),
  );
  const profiles = join(dir, 'lib/profiles.js');
  const limitJs = join(dir, 'lib/limit.js');
  const executor = { function: '(anonymous in lookup)', file: profiles, line: 4, column: 30, functionLine: 4, functionColumn: 22 };
  const lookup = { function: 'lookup', file: profiles, line: 4, column: 10, functionLine: 3, functionColumn: 1 };
  const task = { function: '(anonymous in enrichUser)', file: profiles, line: 7, column: 37, functionLine: 7, functionColumn: 31 };
  const next = { function: 'next', file: limitJs, line: 9, column: 5, functionLine: 5, functionColumn: 16 };
  const run = syntheticRun({
    rps: 260,
    elu: 0.03,
    cores: 0.03,
    latencyMs: 128,
    resources: { Timeout: 2 },
    cwd: dir,
    timerGrowth: [
      { kind: 'timeout', perRequest: 1, clearedShare: 0, firedShare: 1, delayMs: 7, site: executor, stack: [executor, lookup, task, next] },
    ],
  });
  const [f] = ioWait(run);
  assert.equal(f.evidence.poolSize, 2);
  assert.equal((f.evidence.waitsAt as { awaited: string }).awaited, 'limit(() => lookup(user.id))');
  assert.deepEqual(f.culprit, { function: 'enrichUser', file: 'lib/profiles.js', line: 7, column: 1 });
  assert.equal((f.evidence.slotHeldBy as { function: string }).function, 'lookup');
  assert.match(f.summary, /Requests wait for a slot at `await limit\(\(\) => lookup\(user\.id\)\)` in enrichUser \(lib\/profiles\.js:7\)/);
  // Handed to an awaited call; a Promise executor wraps the I/O itself and is no gate.
  assert.deepEqual(awaitedCallee('  const profile = await limit(() => lookup(user.id));', 31), { callee: 'limit', keyword: 'await' });
  assert.deepEqual(awaitedCallee('  await this.queue.add(async () => {', 24), { callee: 'this.queue.add', keyword: 'await' });
  assert.deepEqual(awaitedCallee('  return limit(() => requestRegion(port, ip));', 16), { callee: 'limit', keyword: 'return' });
  assert.equal(awaitedCallee('  return await new Promise((resolve) => {', 28), undefined);
  assert.equal(awaitedCallee('  items.map((x) => x.id);', 13), undefined);
  rmSync(dir, { recursive: true, force: true });
});

test('io-wait: the awaited expression of a line', () => {
  assert.equal(awaitedOn('  const conn = await this.pool.checkout();'), 'this.pool.checkout()');
  assert.equal(awaitedOn('  await sem.acquire() // wait for a turn'), 'sem.acquire()');
  assert.equal(awaitedOn('  const x = compute(); // no await here'), undefined);
  assert.equal(awaitedOn(undefined), undefined);
});

test('io-wait: waits awaited once per item in a loop name the loop that serialises them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-serial-'));
  writeFileSync(
    join(dir, 'cart.js'),
    [
      'async function cartTotal(skus) {',
      '  let total = 0;',
      '  for (const sku of skus) {',
      '    total += await priceOf(sku);',
      '  }',
      '  return total;',
      '}',
    ].join('\n'),
  );
  const priceOf = { function: 'priceOf', file: join(dir, 'cart.js'), line: 20, column: 5 };
  const cartTotal = { function: 'cartTotal', file: join(dir, 'cart.js'), line: 4, column: 20, functionLine: 1, functionColumn: 1 };
  // Six 5 ms timers per request, one after another: 30 ms end to end, the latency p50.
  const run = syntheticRun({
    rps: 300,
    elu: 0.05,
    cores: 0.05,
    latencyMs: 30,
    inFlight: 9,
    resources: { Timeout: 9 },
    cwd: dir,
    timerGrowth: [
      { kind: 'timeout', perRequest: 6, clearedShare: 0, firedShare: 1, delayMs: 5, site: priceOf, stack: [priceOf, cartTotal] },
    ],
  });
  const [f] = ioWait(run);
  assert.equal(f.evidence.sequential, true);
  assert.deepEqual(f.culprit, { function: 'cartTotal', file: 'cart.js', line: 3 });
  assert.equal((f.evidence.waitsIn as { function: string }).function, 'priceOf');
  assert.match(f.summary, /awaited once per item by the loop at cart\.js:3 in cartTotal/);
  rmSync(dir, { recursive: true, force: true });
});

// A loop busy 96 % of the time while getting a core 22 % of it (a busy machine): 260 requests a
// second of 0.81 ms of CPU each, 8 in flight, so the loop takes about 30 ms to run the work of all
// of them once (its round) and a callback that becomes ready waits about that long.
const saturated = { rps: 260, elu: 0.96, cores: 0.21, inFlight: 8, resources: { TCPSocketWrap: 28 }, cwd: '/app' };

test('io-wait: one call per request no longer than the round of a saturated loop is the loop queue, not the I/O', () => {
  const fetchOnce = {
    api: 'fetch' as const,
    origin: 'http://127.0.0.1:4000',
    perRequest: 1,
    msEach: 35,
    site: executor,
    stack: [executor, fetchQuote, handler],
  };
  assert.deepEqual(ioWait(syntheticRun({ ...saturated, latencyMs: 25, outgoing: [fetchOnce] })), []);
  // Nothing the hooks saw: the requests' time is the loop's queue too.
  assert.deepEqual(ioWait(syntheticRun({ ...saturated, latencyMs: 25 })), []);
});

test('io-wait: on a saturated loop, a call several rounds long and calls awaited one after another are still the wait', () => {
  const slow = {
    api: 'fetch' as const,
    origin: 'http://127.0.0.1:4000',
    perRequest: 1,
    msEach: 120,
    site: executor,
    stack: [executor, fetchQuote, handler],
  };
  const [f] = ioWait(syntheticRun({ ...saturated, latencyMs: 125, outgoing: [slow] }));
  assert.equal(f?.category, 'io-wait');
  assert.equal(f.culprit?.function, 'fetchQuote');
  const three = { ...slow, perRequest: 3, msEach: 10 };
  const [g] = ioWait(syntheticRun({ ...saturated, latencyMs: 30, outgoing: [three] }));
  assert.equal(g?.category, 'io-wait');
  assert.equal(g.evidence.sequential, true);
});
