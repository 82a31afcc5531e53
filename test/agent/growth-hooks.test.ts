// The growth hooks in real processes: each mistake in the fixtures is reported with the
// fixture's own file:line (found from `@site:` markers), and with counts that follow the
// requests sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentMessage, GrowthMessage, CallSite, ListenMessage } from '../../src/agent/protocol.js';
import { Collector, get, getMany, FIXTURES, agentLauncher } from './helpers/agent-harness.js';

const startWith = agentLauncher();

/** The 1-based line of the `@site:<name>` marker in a fixture. */
function markerLine(fixture: string, name: string): number {
  const lines = readFileSync(join(FIXTURES, fixture), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(`@site:${name}`));
  assert.ok(i >= 0, `marker ${name} in ${fixture}`);
  return i + 1;
}

function assertSite(site: CallSite | undefined, fixture: string, name: string): void {
  assert.ok(site, `a site for ${name}`);
  assert.ok(site.file.endsWith(`/fixtures/agent/${fixture}`), `${site.file} is the fixture`);
  assert.equal(site.line, markerLine(fixture, name));
  assert.ok(site.column > 0);
}

const growthWhere =
  (pred: (g: GrowthMessage) => boolean) =>
  (m: AgentMessage): m is GrowthMessage =>
    m.type === 'growth' && pred(m);

test('listener added per request: count grows with the requests, at the adding line; defaultMaxListeners = Infinity with its site', async () => {
  const { c, port } = await startWith(['growth.cjs']);
  await getMany(port, '/leak', 40);
  const g = await c.waitFor(
    growthWhere((m) => m.listeners.some((l) => l.event === 'after' && l.count >= 40)),
    10_000,
    'after listeners',
  );
  const entry = g.listeners.find((l) => l.event === 'after')!;
  assert.equal(entry.emitter, 'Server');
  assert.equal(entry.count, 40);
  assert.equal(entry.added, 39); // additions that left two or more: the first one left one
  assert.equal(entry.current, 40, 'the server still holds them all');
  assert.equal(entry.maxListeners, null, 'the default, lifted to Infinity');
  assert.equal(entry.maxListenersOwn, false);

  assertSite(entry.site, 'growth.cjs', 'listener');
  assert.equal(entry.site!.function, 'attachAfterEvent');
  const off = g.maxListenersDisabled.find((x) => x.what === 'events.defaultMaxListeners');
  assert.ok(off, JSON.stringify(g.maxListenersDisabled));
  assert.equal(off.value, null); // Infinity, which JSON cannot carry
  assertSite(off.site, 'growth.cjs', 'max-listeners');
  // Per-connection listeners of the HTTP internals do not grow: their count stays small.
  assert.ok(
    g.listeners.filter((l) => l.event !== 'after').every((l) => l.count < 10),
    JSON.stringify(g.listeners),
  );
});

test('listeners added with once() for an event that never comes are told as once listeners', async () => {
  const { c, port } = await startWith(['growth.cjs']);
  await getMany(port, '/once', 30);
  const g = await c.waitFor(
    growthWhere((m) => m.listeners.some((l) => l.event === 'shutdown' && l.count >= 30)),
    10_000,
    'shutdown listeners',
  );
  const entry = g.listeners.find((l) => l.event === 'shutdown')!;
  assert.equal(entry.once, true);
  assert.equal(entry.current, 30);
  assertSite(entry.site, 'growth.cjs', 'once');
  // The per-request 'after' listeners of /leak are plain on() listeners.
  await getMany(port, '/leak', 5);
  const h = await c.waitFor(
    growthWhere((m) => m.listeners.some((l) => l.event === 'after' && l.count >= 5)),
    10_000,
    'after listeners',
  );
  assert.equal(h.listeners.find((l) => l.event === 'after')!.once, undefined);
});

test("listeners that pile up while requests are in flight are gone at the end; node lifting the limit for a Worker's stdio is no silenced warning", async () => {
  const { c, port } = await startWith(['growth.cjs']);
  await Promise.all(Array.from({ length: 30 }, () => get(port, '/wait', false)));
  await Promise.all(Array.from({ length: 4 }, () => get(port, '/worker', false)));
  const released = growthWhere((m) => m.listeners.some((l) => l.event === 'open' && l.count >= 20 && l.current === 0));
  const g = await c.waitFor(released, 10_000, 'the pile-up released').catch((e: unknown) => {
    const seen = c.of('growth').map((m) => m.listeners.filter((l) => l.event === 'open'));
    throw new Error(`${String(e)}; 'open' listeners in the growth reports seen: ${JSON.stringify(seen)}`);
  });
  assert.equal(g.listeners.find((l) => l.event === 'open')!.emitter, 'EventEmitter');
  assert.deepEqual(
    g.maxListenersDisabled.filter((x) => x.what !== 'events.defaultMaxListeners'),
    [],
  );
});

test('Express route registered after listen: count, path, growing router stack and the registering line', async () => {
  const { c, port } = await startWith(['growth.cjs']);
  await getMany(port, '/register', 5, 1);
  const first = await c.waitFor(
    growthWhere((m) => m.routes.some((r) => r.count >= 5)),
    10_000,
    'routes',
  );
  const route = first.routes.find((r) => r.path === '/static')!;
  assert.equal(route.framework, 'express');
  assert.equal(route.method, 'GET');
  assert.equal(route.count, 5);
  const sizeAt5 = route.stackSize!;
  await getMany(port, '/register', 5, 1);
  const later = await c.waitFor(
    growthWhere((m) => m.routes.some((r) => r.count >= 10)),
    10_000,
    'more routes',
  );
  const again = later.routes.find((r) => r.path === '/static')!;
  assert.equal(again.stackSize, sizeAt5 + 5);
  // The site is the user's call to app.get; express's own frames stay in the stack above it.
  assertSite(again.site, 'growth.cjs', 'route');
  assert.equal(again.site!.function, 'refreshRoutes');
  assert.ok(again.stack![0].file.includes('/node_modules/express/'), JSON.stringify(again.stack));
});

test('timers never cleared are pending at their creation line', async () => {
  const { c, port } = await startWith(['growth.cjs']);
  await getMany(port, '/timer', 25);
  const g = await c.waitFor(
    growthWhere((m) => m.timers.some((t) => t.pending >= 25)),
    10_000,
    'pending timers',
  );
  const t = g.timers.find((x) => x.pending >= 25)!;
  assert.equal(t.kind, 'timeout');
  assert.equal(t.created, 25);
  assert.equal(t.cleared, 0);
  assert.equal(t.delayMs, 25 * 60_000, 'the delays they asked for');
  assertSite(t.site, 'growth.cjs', 'timer');
});

test('pbkdf2Sync inside a request (CommonJS require): count, time and site', async () => {
  const { c, port } = await startWith(['growth.cjs']);
  await getMany(port, '/login', 12);
  const g = await c.waitFor(
    growthWhere((m) => m.syncCalls.some((s) => s.api === 'crypto.pbkdf2Sync' && s.count >= 12)),
    10_000,
    'sync calls',
  );
  const s = g.syncCalls.find((x) => x.api === 'crypto.pbkdf2Sync')!;
  assert.equal(s.count, 12);
  assert.ok(s.totalMs > 0);
  assertSite(s.site, 'growth.cjs', 'sync');
  assert.equal(s.site!.function, 'hashPassword');
});

test('pbkdf2Sync imported by name in ESM is caught too', async () => {
  const { c, port } = await startWith(['sync.mjs']);
  await getMany(port, '/', 6);
  const g = await c.waitFor(
    growthWhere((m) => m.syncCalls.some((s) => s.api === 'crypto.pbkdf2Sync' && s.count >= 6)),
    10_000,
    'sync calls',
  );
  const s = g.syncCalls.find((x) => x.api === 'crypto.pbkdf2Sync')!;
  assert.equal(s.count, 6);
  assert.ok(s.site!.file.startsWith('file://') && s.site!.file.endsWith('/fixtures/agent/sync.mjs'));
  assert.equal(s.site!.line, markerLine('sync.mjs', 'sync'));
});

test('outgoing http.get and fetch inside a request: count, wait time and the calling line', async () => {
  const { c, port: first } = await startWith(['outgoing.cjs']);
  // The fixture's first listen is its upstream; the server to drive is the second.
  const listen = await c.waitFor((m): m is ListenMessage => m.type === 'listen' && m.port !== first, 10_000, 'second listen');
  // One request at a time, so each upstream call finds the previous call's connection free.
  await getMany(listen.port!, '/', 5, 1);
  const g = await c.waitFor(
    growthWhere((m) => (m.outgoing ?? []).filter((o) => o.completed >= 5).length >= 2),
    10_000,
    'outgoing calls',
  );
  const http = g.outgoing!.find((o) => o.api === 'http')!;
  const fetch = g.outgoing!.find((o) => o.api === 'fetch')!;
  // The call made at start-up, outside any request, is not counted.
  assert.equal(http.count, 5);
  assert.equal(fetch.count, 5);
  assert.equal(http.origin, `http://127.0.0.1:${first}`);
  assert.ok(http.totalMs >= 5 * 15, `${http.totalMs} ms`);
  assertSite(http.site, 'outgoing.cjs', 'http');
  assertSite(fetch.site, 'outgoing.cjs', 'fetch');
  assert.equal(fetch.site!.function, 'fetchUpstream');
  // The global agent keeps connections alive (node >= 19): the start-up call's is reused.
  assert.equal(http.newConnections, 0);
  assert.equal(fetch.newConnections, undefined, 'not measured for fetch');
  // fetch's bundled undici publishes on the undici channels too: its calls are counted once, as fetch.
  assert.deepEqual(
    g.outgoing!.filter((o) => o.api === 'undici'),
    [],
  );
});

test('outgoing calls made with the npm undici package (a Pool request): count, wait time and the calling line', async () => {
  const { c, port: first } = await startWith(['outgoing-undici.cjs']);
  const listen = await c.waitFor((m): m is ListenMessage => m.type === 'listen' && m.port !== first, 10_000, 'second listen');
  await getMany(listen.port!, '/', 5, 1);
  const g = await c.waitFor(
    growthWhere((m) => (m.outgoing ?? []).some((o) => o.api === 'undici' && o.completed >= 5)),
    10_000,
    'undici calls',
  );
  const calls = g.outgoing!.filter((o) => o.api === 'undici');
  assert.equal(calls.length, 1, JSON.stringify(calls));
  const [u] = calls;
  // The call made at start-up, outside any request, is not counted.
  assert.equal(u.count, 5);
  assert.equal(u.completed, 5);
  assert.equal(u.origin, `http://127.0.0.1:${first}`);
  assert.ok(u.totalMs >= 5 * 15, `${u.totalMs} ms`);
  assertSite(u.site, 'outgoing-undici.cjs', 'undici');
  assert.equal(u.site!.function, 'askUpstream');
});

test('outgoing http.get with agent: false: every answered call counted as a new connection', async () => {
  const { c, port: first } = await startWith(['outgoing.cjs', 'no-keepalive']);
  const listen = await c.waitFor((m): m is ListenMessage => m.type === 'listen' && m.port !== first, 10_000, 'second listen');
  await getMany(listen.port!, '/', 4, 1);
  const g = await c.waitFor(
    growthWhere((m) => (m.outgoing ?? []).some((o) => o.api === 'http' && o.completed >= 4)),
    10_000,
    'outgoing calls',
  );
  const http = g.outgoing!.find((o) => o.api === 'http')!;
  assert.equal(http.completed, 4);
  assert.equal(http.newConnections, 4);
});

/** `n` requests to the target, all at once, each on its own connection. */
async function burst(port: number, path: string, n: number): Promise<void> {
  await Promise.all(Array.from({ length: n }, () => get(port, path, false)));
}

async function poolFixture(): Promise<{ c: Collector; port: number; upstream: number }> {
  const { c, port: upstream } = await startWith(['outgoing-pool.cjs']);
  const listen = await c.waitFor((m): m is ListenMessage => m.type === 'listen' && m.port !== upstream, 10_000, 'second listen');
  return { c, port: listen.port!, upstream };
}

test('outgoing http.get through a keep-alive agent capped at 2 sockets: the calls queue for them and reuse them', async () => {
  const { c, port } = await poolFixture();
  await burst(port, '/pool', 12);
  await burst(port, '/pool', 12);
  const g = await c.waitFor(
    growthWhere((m) => (m.outgoing ?? []).some((o) => o.completed >= 24)),
    10_000,
    'outgoing calls',
  );
  const http = g.outgoing!.find((o) => o.api === 'http')!;
  assert.equal(http.completed, 24);
  assertSite(http.site, 'outgoing-pool.cjs', 'call');
  // A call that waited in the agent's queue got a freed socket: request.reusedSocket stays false
  // for it, yet only the pool's two connections were ever opened.
  assert.equal(http.newConnections, 2);
  assert.equal(http.maxSockets, 2);
  assert.ok(http.queued! >= 16, `${http.queued} of 24 calls queued`);
  // 12 calls at a time on 2 sockets of ~20 ms: most of each call is the wait for a socket.
  assert.ok(http.socketWaitMs! > http.totalMs / 3, `${http.socketWaitMs} of ${http.totalMs} ms waiting for a socket`);
  assert.ok(http.concurrencyMs!.length > 3, 'the queued calls count as in flight');
});

test('outgoing calls behind a promise lock: never more than one in flight, while many requests are', async () => {
  const { c, port } = await poolFixture();
  await burst(port, '/lock', 10);
  const g = await c.waitFor(
    growthWhere((m) => (m.outgoing ?? []).some((o) => o.completed >= 10)),
    10_000,
    'outgoing calls',
  );
  const http = g.outgoing!.find((o) => o.api === 'http')!;
  assert.equal(http.completed, 10);
  assert.equal(http.queued, 0, 'the lock, not the agent, holds them back');
  assert.equal(http.concurrencyMs!.length, 2, `time per level ${JSON.stringify(http.concurrencyMs)}`);
  assert.ok(http.concurrencyMs![1] >= 10 * 15, `${http.concurrencyMs![1]} ms with one call in flight`);
  assert.equal(http.newConnections, 1);
});

test('timers set with one shared callback: past the first captures, sampled stacks still count every timer at its site', async () => {
  const { c, port } = await poolFixture();
  await getMany(port, '/ticks', 4, 1);
  const g = await c.waitFor(
    growthWhere((m) => m.timers.some((t) => t.created >= 200)),
    10_000,
    'timers',
  );
  const ticks = g.timers.filter((t) => t.site?.file.endsWith('outgoing-pool.cjs'));
  assert.equal(ticks.length, 1, JSON.stringify(ticks));
  assert.equal(ticks[0].created, 200);
  assertSite(ticks[0].site, 'outgoing-pool.cjs', 'tick');
});

test('sync calls outside requests are not counted', async () => {
  const { c, port } = await startWith(['growth.cjs']);
  // Startup did plenty of fs *Sync (module loading) before and while listening: none counted.
  await getMany(port, '/leak', 2);
  const g = await c.waitFor(
    growthWhere(() => true),
    10_000,
    'growth',
  );
  assert.deepEqual(
    g.syncCalls.filter((s) => s.api.startsWith('fs.')),
    [],
  );
});

test('@koa/router route registered after listen: count, growing stack and the registering line', async () => {
  const { c, port } = await startWith(['koa-routes.cjs']);
  await getMany(port, '/add', 4, 1);
  const g = await c.waitFor(
    growthWhere((m) => m.routes.some((r) => r.path === '/dyn' && r.count >= 4)),
    10_000,
    'koa routes',
  );
  const route = g.routes.find((r) => r.path === '/dyn')!;
  assert.equal(route.framework, 'koa-router');
  assert.equal(route.method, 'GET');
  assert.equal(route.count, 4);
  assert.ok(route.stackSize! >= 5, `stack size ${route.stackSize}`);
  assertSite(route.site, 'koa-routes.cjs', 'route');
  assert.equal(route.site!.function, 'addDynamicRoute');
  assert.ok(
    route.stack!.some((f) => f.file.includes('/node_modules/@koa/router/')),
    JSON.stringify(route.stack),
  );
});

test("Koa's app.use after listen: count, middleware stack size and the registering line", async () => {
  const { c, port } = await startWith(['koa-routes.cjs']);
  await getMany(port, '/use', 3, 1);
  const g = await c.waitFor(
    growthWhere((m) => m.routes.some((r) => r.framework === 'koa' && r.count >= 3)),
    10_000,
    'koa app.use',
  );
  const use = g.routes.find((r) => r.framework === 'koa')!;
  assert.equal(use.method, 'USE');
  assert.equal(use.path, '/');
  assert.equal(use.count, 3);
  // router.routes() was the one middleware before listen.
  assert.equal(use.stackSize, 4);
  assertSite(use.site, 'koa-routes.cjs', 'use');
  assert.equal(use.site!.function, 'addAuditMiddleware');
});

test("each leaking emitter carries its own limit: the default, lifted on it (with the site), lifted through the static form; a framework lifting another emitter's limit is not theirs", async () => {
  const { c, port } = await startWith(['max-listeners.cjs']);
  for (const path of ['/db', '/bus', '/chan']) await getMany(port, path, 15);
  const g = await c.waitFor(
    growthWhere((m) => ['reconnect', 'change', 'message'].every((e) => (m.listeners.find((l) => l.event === e)?.count ?? 0) >= 15)),
    10_000,
    'three leaks',
  );
  const row = (event: string) => g.listeners.find((l) => l.event === event)!;
  const db = row('reconnect');
  assert.equal(db.emitter, 'DbClient');
  assert.equal(db.maxListeners, 10);
  assert.equal(db.maxListenersOwn, false);
  assert.equal(db.maxListenersSite, undefined);
  const bus = row('change');
  assert.equal(bus.emitter, 'Bus');
  assert.equal(bus.maxListeners, null, 'Infinity, which JSON cannot carry');
  assert.equal(bus.maxListenersOwn, true);
  assertSite(bus.maxListenersSite, 'max-listeners.cjs', 'bus-lift');
  const chan = row('message');
  assert.equal(chan.maxListeners, 0);
  assert.equal(chan.maxListenersOwn, true);
  assertSite(chan.maxListenersSite, 'max-listeners.cjs', 'static-lift');
  // The framework's own lift is still reported as a silencing, for its class.
  const bootLift = g.maxListenersDisabled.find((d) => d.what === 'Boot.setMaxListeners');
  assertSite(bootLift?.site, 'max-listeners.cjs', 'boot-lift');
});

test('defaultMaxListeners = Infinity set through an ESM import is still reported (without a site)', async () => {
  const { c } = await startWith(['esm-max-listeners.mjs']);
  const g = await c.waitFor(
    growthWhere((m) => m.maxListenersDisabled.length > 0),
    10_000,
    'maxListenersDisabled',
  );
  assert.deepEqual(g.maxListenersDisabled, [{ what: 'events.defaultMaxListeners', value: null }]);
});

test('patched builtins keep their extra properties (fs.realpathSync.native, promisified setTimeout)', async () => {
  const { c, port } = await startWith(['builtins.cjs']);
  assert.equal((await get(port, '/')).body, 'native:function promisified:ok name:pbkdf2Sync');
  assert.ok(c.of('hello').length > 0);
});

test('restify: a route registered after listen and an `after` listener added per request (story 1)', async () => {
  const { c, port } = await startWith(['restify-routes.cjs']);
  await getMany(port, '/add', 5, 1);
  const dyn = (m: GrowthMessage) => m.routes.filter((r) => r.path.startsWith('/dyn'));
  const g = await c.waitFor(
    growthWhere((m) => dyn(m).length >= 5 && m.listeners.some((l) => l.event === 'after' && l.count >= 5)),
    10_000,
    'restify growth',
  );
  assert.deepEqual(
    dyn(g)
      .map((r) => r.path)
      .sort(),
    ['/dyn1', '/dyn2', '/dyn3', '/dyn4', '/dyn5'],
  );
  for (const route of dyn(g)) {
    assert.equal(route.framework, 'restify');
    assert.equal(route.method, 'GET');
    assertSite(route.site, 'restify-routes.cjs', 'route');
  }
  const after = g.listeners.find((l) => l.event === 'after')!;
  assert.equal(after.count, 5);
  assertSite(after.site, 'restify-routes.cjs', 'listener');
});

test('Connection: close set by the app: responses counted, and the setHeader and writeHead lines that set it', async () => {
  const { c, port } = await startWith(['close-header.cjs']);
  await getMany(port, '/', 4, 1);
  await getMany(port, '/legacy', 6, 1);
  await getMany(port, '/raw', 6, 1);
  const g = await c.waitFor(
    growthWhere((m) => (m.closeHeaderSites ?? []).reduce((a, s) => a + s.count, 0) >= 11),
    10_000,
    'close header sites',
  );
  const sites = g.closeHeaderSites!;
  const setHeader = sites.find((s) => s.site.function === 'applyLegacyHeaders');
  const writeHead = sites.find((s) => s.site.function === 'writeRaw');
  assertSite(setHeader?.site, 'close-header.cjs', 'setHeader');
  assertSite(writeHead?.site, 'close-header.cjs', 'writeHead');
  // The first closing response arms the hook: it is counted in the samples, not at its site.
  assert.equal(setHeader!.count, 5);
  assert.equal(writeHead!.count, 6);
  await c.waitFor(
    (m) => m.type === 'sample' && c.of('sample').reduce((a, s) => a + (s.http?.closeHeader ?? 0), 0) >= 12,
    10_000,
    'closing responses',
  );
  const samples = c.of('sample');
  assert.equal(
    samples.reduce((a, s) => a + (s.http?.closeHeader ?? 0), 0),
    12,
  );
  assert.equal(
    samples.reduce((a, s) => a + (s.http?.closing ?? 0), 0),
    12,
    'the keep-alive requests to / closed nothing',
  );
});

type HandleRow = NonNullable<GrowthMessage['handles']>[number];
const handlesAt = (m: GrowthMessage, fixture: string, name: string): HandleRow | undefined =>
  m.handles?.find((h) => h.site?.file.endsWith(`/fixtures/agent/${fixture}`) && h.site.line === markerLine(fixture, name));

test('handles opened per request: fs.watch watchers, TCP and UDP sockets counted open at their line; closed ones and exited children are not', async () => {
  const { c, port } = await startWith(['handles.cjs']);
  await getMany(port, '/watch', 12);
  await getMany(port, '/watch-closed', 7);
  await getMany(port, '/connect', 9);
  await getMany(port, '/udp', 6);
  await getMany(port, '/spawn', 3, 1);
  const ready = (m: GrowthMessage) =>
    (handlesAt(m, 'handles.cjs', 'watch')?.created ?? 0) >= 19 &&
    (handlesAt(m, 'handles.cjs', 'connect')?.created ?? 0) >= 9 &&
    (handlesAt(m, 'handles.cjs', 'udp')?.created ?? 0) >= 6 &&
    handlesAt(m, 'handles.cjs', 'spawn')?.created === 3 &&
    handlesAt(m, 'handles.cjs', 'spawn')?.open === 0;
  const g = await c.waitFor(growthWhere(ready), 15_000, 'handles');
  const watch = handlesAt(g, 'handles.cjs', 'watch')!;
  assert.deepEqual([watch.api, watch.resource, watch.created, watch.open, watch.unref], ['fs.watch', 'FSEventWrap', 19, 12, undefined]);
  assert.equal(watch.site!.function, 'watchConfig');
  const connect = handlesAt(g, 'handles.cjs', 'connect')!;
  assert.deepEqual([connect.api, connect.resource, connect.created, connect.open], ['net.connect', 'TCPSocketWrap', 9, 9]);
  assert.equal(connect.site!.function, 'sendMetric');
  const udp = handlesAt(g, 'handles.cjs', 'udp')!;
  assert.deepEqual([udp.api, udp.resource, udp.open], ['dgram.createSocket', 'UDPWrap', 6]);
  const child = handlesAt(g, 'handles.cjs', 'spawn')!;
  assert.deepEqual([child.api, child.resource], ['child_process.spawn', 'ProcessWrap']);
  assertSite(child.site, 'handles.cjs', 'spawn');
});

test("unref'd fs.watch watchers, which the active resources do not list, are counted open and unref'd", async () => {
  const { c, port } = await startWith(['handles.cjs']);
  await getMany(port, '/watch-unref', 15);
  const g = await c.waitFor(
    growthWhere((m) => (handlesAt(m, 'handles.cjs', 'watch-unref')?.open ?? 0) >= 15),
    10_000,
    "unref'd watchers",
  );
  const row = handlesAt(g, 'handles.cjs', 'watch-unref')!;
  assert.deepEqual([row.created, row.open, row.unref], [15, 15, 15]);
  const sample = c.of('sample').at(-1)!;
  assert.ok((sample.resources.FSEventWrap ?? 0) < 15, `active resources: ${JSON.stringify(sample.resources)}`);
});

test('timers/promises timeouts: pending at the awaiting line until their delay runs out', async () => {
  const { c, port } = await startWith(['handles.cjs']);
  await getMany(port, '/sleep', 10);
  await getMany(port, '/nap', 8);
  const g = await c.waitFor(
    growthWhere((m) => m.timers.some((t) => t.promise && t.pending >= 10) && m.timers.some((t) => t.promise && t.fired >= 8)),
    10_000,
    'promise timers',
  );
  const long = g.timers.find((t) => t.site?.line === markerLine('handles.cjs', 'sleep'))!;
  assert.deepEqual([long.kind, long.promise, long.created, long.pending, long.delayMs], ['timeout', true, 10, 10, 600_000]);
  assert.equal(long.site!.function, 'remindLater');
  const short = g.timers.find((t) => t.site?.line === markerLine('handles.cjs', 'nap'))!;
  assert.deepEqual([short.created, short.fired, short.pending], [8, 8, 0]);
});

test('timers/promises imported by name in ESM are seen too', async () => {
  const { c, port } = await startWith(['timers-promises.mjs']);
  await getMany(port, '/', 6);
  const g = await c.waitFor(
    growthWhere((m) => m.timers.some((t) => t.promise && t.pending >= 6)),
    10_000,
    'ESM promise timers',
  );
  assertSite(g.timers.find((t) => t.promise)!.site, 'timers-promises.mjs', 'sleep');
});

test("a sleep helper awaited in a loop: its timers are marked awaited, and the stack kept is the loop's own", async () => {
  const { c, port } = await startWith(['handles.cjs']);
  await getMany(port, '/poll', 4);
  const g = await c.waitFor(
    growthWhere((m) => m.timers.some((t) => t.awaited && t.created >= 24)),
    10_000,
    'awaited timers',
  );
  const t = g.timers.find((x) => x.awaited)!;
  assertSite(t.site, 'handles.cjs', 'pause');
  // Re-armed from the resumed pollStatus (V8 adds the awaiting pollStatus as an async frame): not the route that started it.
  assert.deepEqual([...new Set(t.stack!.map((f) => f.function))], ['(anonymous)', 'pause', 'pollStatus']);
});

test('a burst of timers past the capture budget is sampled, and its count scaled to about the real one', async () => {
  const { c, port } = await startWith(['handles.cjs']);
  await getMany(port, '/burst', 5, 1);
  const g = await c.waitFor(
    growthWhere((m) => m.timers.some((t) => t.awaited && t.created >= 3_000)),
    10_000,
    'sampled timers',
  );
  const t = g.timers.find((x) => x.awaited)!;
  // 5,000 timers: all recorded up to the budget, then about 1 in 16 with weight 16.
  assert.ok(t.created > 3_750 && t.created < 6_250, `created ${t.created}`);
  assert.ok(t.pending > 3_750 && t.pending < 6_250, `pending ${t.pending}`);
});
