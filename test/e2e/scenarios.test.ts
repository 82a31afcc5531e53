// End to end on servers the detectors were not tuned on (test/fixtures/scenarios/, see its
// README): `hotpath run` (the built CLI) on each, asserting the main finding's category, the
// culprit's function and file (relative to the scenario) with a line, and a severity above
// info; the healthy control must get no warning or critical finding. Slow: one short load each.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runReport } from '../run/helpers/run-cli.js';
import { checkDiagnosis, findingsSummary } from './helpers/diagnosis.js';
import { busyMachine, startCpuHog } from './helpers/cpu-hog.js';
import type { Report } from '../../src/report/report-schema.js';

/** The scenarios are sources, not build output: test/fixtures/scenarios at the repository root. */
const scenariosDir = fileURLToPath(new URL('../../../test/fixtures/scenarios/', import.meta.url));
// HOTPATH_SCENARIOS_OUT=<dir> keeps the run directories there (to re-analyse a failure with
// `hotpath report`); otherwise they go to a temporary directory removed at the end.
const keptOut = process.env.HOTPATH_SCENARIOS_OUT;
const out = keptOut ?? mkdtempSync(join(tmpdir(), 'hotpath-scenarios-'));
if (keptOut === undefined) after(() => rmSync(out, { recursive: true, force: true }));
// HOTPATH_BUSY=1: every scenario runs beside one spinning process per core (a busy laptop, a
// shared CI runner), and must be diagnosed the same. A slow run of its own, not part of every CI run.
const hog = busyMachine ? startCpuHog() : undefined;
if (hog) console.log(`# busy machine: ${hog.processes} spinning processes beside every scenario`);
after(() => hog?.stop());

interface Expectation {
  category: string;
  culprit?: { function: string | string[]; file: string };
  /**
   * A limitation the scenario exposes and hotpath does not handle yet: the culprit hotpath names
   * today is accepted as well, and only that one (it must still be on the bug's call path), with why.
   */
  knownGap?: { reason: string; accepts: { function: string; file: string } };
  /** A diagnosis known to fail from this Node major on, with why: the test is reported as skipped there (never passed). */
  failsFromNode?: { major: number; reason: string };
}

const expected: Record<string, Expectation | 'healthy'> = {
  'regex-validate': { category: 'event-loop-blocking', culprit: { function: 'validateSignup', file: 'lib/validate.js' } },
  'gzip-export': { category: 'sync-io', culprit: { function: 'compressExport', file: 'lib/export.js' } },
  'readfile-config': { category: 'sync-io', culprit: { function: 'loadPriceList', file: 'lib/prices.js' } },
  // The retained view still charges the inlined callees to page (V8), but page calls one app function.
  'cache-leak': { category: 'memory-leak', culprit: { function: ['rememberResponse', 'renderPage'], file: 'lib/cache.js' } },
  'interval-leak': { category: 'timer-leak', culprit: { function: 'startHeartbeat', file: 'lib/session.js' } },
  'big-json': { category: 'serialization', culprit: { function: 'renderInventory', file: 'lib/render.js' } },
  'slow-upstream': { category: 'io-wait', culprit: { function: 'fetchQuote', file: 'lib/pricing.js' } },
  'bus-listener-leak': { category: 'listener-leak', culprit: { function: 'subscribeToConfig', file: 'lib/config.js' } },
  'stdout-logging': { category: 'sync-io', culprit: { function: 'logRequest', file: 'lib/log.js' } },
  'keepalive-off-upstream': { category: 'connection-churn', culprit: { function: 'fetchStock', file: 'lib/inventory.js' } },
  'koa-middleware-growth': { category: 'handler-growth', culprit: { function: 'ensureMetrics', file: 'lib/metrics.js' } },
  // The last app function the hung requests went through is the listener (allow() returned false to it).
  'hung-branch': { category: 'unanswered-requests', culprit: { function: 'search', file: 'server.js' } },
  // The hand-over to the pool takes tens of µs per call: the profile may not catch it (then no culprit).
  'threadpool-login': { category: 'off-loop-cpu' },
  'inlined-etag': { category: 'event-loop-blocking', culprit: { function: 'checksum', file: 'lib/etag.js' } },
  'permissions-deep-copy': { category: 'serialization', culprit: { function: 'permissionsFor', file: 'lib/permissions.js' } },
  'serial-lookups': { category: 'io-wait', culprit: { function: 'cacheGet', file: 'lib/profile.js' } },
  // The requests queue on a promise lock, which no hook sees: the finding names no culprit yet.
  'flags-lock': { category: 'io-wait' },
  'capped-agent-upstream': { category: 'io-wait', culprit: { function: 'holdSeat', file: 'lib/booking.js' } },
  // The wait for a turn is where the task is handed to the limiter (`return limit(() => ...)`), not the I/O the turn is for.
  'limited-lookups': { category: 'io-wait', culprit: { function: 'lookupRegion', file: 'lib/geo.js' } },
  // The regexp runs in the validator fastify compiled (no app frame): the place the app writes its pattern is named.
  'schema-regex': { category: 'event-loop-blocking', culprit: { function: '/^(\\w+\\s?)*$/', file: 'lib/profile-routes.js' } },
  // A verdict on shares (24-38 % of the CPU compiling), not on the 0.18-0.5 ms a request costs on this core or that one.
  'rule-compile': { category: 'event-loop-blocking', culprit: { function: 'evaluateRule', file: 'lib/discounts.js' } },
  'udp-stats-leak': { category: 'memory-leak', culprit: { function: 'flush', file: 'lib/stats.js' } },
  'delivery-retry-loop': { category: 'timer-leak', culprit: { function: 'retryDelivery', file: 'lib/outbox.js' } },
  'yield-per-item': { category: 'event-loop-blocking', culprit: { function: 'rankProducts', file: 'lib/rank.js' } },
  'worker-clone-quote': { category: 'event-loop-blocking', culprit: { function: 'sendJob', file: 'lib/quotes.js' } },
  // Requests await a slot of a two-connection pool: where they wait, not the query holding the slot.
  'pool-checkout': { category: 'io-wait', culprit: { function: 'findInvoice', file: 'lib/invoices.js' } },
  // The call counts tell a loop of thousands of cheap calls (3,000 per search) from a few costly ones.
  'slugify-per-item': { category: 'event-loop-blocking', culprit: { function: 'search', file: 'lib/catalog.js' } },
  'audit-closure-leak': { category: 'memory-leak', culprit: { function: 'recordAccess', file: 'lib/audit.js' } },
  'express-hung-route': { category: 'unanswered-requests', culprit: { function: 'showInvoice', file: 'lib/invoices.js' } },
  'healthy-koa': 'healthy',
  'healthy-express': 'healthy',
  'export-hung-aliases': { category: 'unanswered-requests', culprit: { function: 'exportReport', file: 'lib/export.js' } },
  'webhook-buffer-archive': { category: 'memory-leak', culprit: { function: 'archiveDelivery', file: 'lib/archive.js' } },
  // The middleware that took the hung requests last (the router stamps each request), not the framework's listener.
  'polka-hung-middleware': { category: 'unanswered-requests', culprit: { function: 'requireApiKey', file: 'lib/auth.js' } },
  'connect-hung-middleware': { category: 'unanswered-requests', culprit: { function: 'loadSession', file: 'lib/session.js' } },
  'express4-hung-middleware': { category: 'unanswered-requests', culprit: { function: 'resolveTenant', file: 'lib/tenant.js' } },
  'polka-route-growth': { category: 'handler-growth', culprit: { function: 'registerTenant', file: 'lib/tenants.js' } },
  // Fastify 5 publishes each handler call with its route: the route's handler, not fastify's listener.
  'fastify-hung-route': { category: 'unanswered-requests', culprit: { function: 'showAccount', file: 'lib/accounts.js' } },
  // The load engine honours the header (a new connection per request); the line that sets it is named.
  'close-header-api': { category: 'connection-churn', culprit: { function: 'applyHeaders', file: 'lib/headers.js' } },
  // Fastify 4 publishes no handler call: the hooks and handlers the app registers are wrapped (fastify.initialization).
  'fastify4-quota-hook': { category: 'unanswered-requests', culprit: { function: 'checkQuota', file: 'lib/quota.js' } },
  // Koa composes a copy of app.middleware: the agent runs the same functions wrapped; @koa/router's layers in place.
  'koa2-hung-lookup': { category: 'unanswered-requests', culprit: { function: 'showProduct', file: 'lib/prices.js' } },
  // Every hapi app function runs through the toolkit's execute: an ext point that never continues is named.
  'hapi-hung-ext': { category: 'unanswered-requests', culprit: { function: 'auditRequest', file: 'lib/audit.js' } },
  // Hono's context knows the matched routes and which ran last.
  'hono-hung-route': { category: 'unanswered-requests', culprit: { function: 'avatar', file: 'lib/avatars.js' } },
  'restify-hung-route': { category: 'unanswered-requests', culprit: { function: 'getTicket', file: 'lib/tickets.js' } },
  // server.ext per request: the function that keeps adding the extension, not the extension.
  'hapi-ext-growth': { category: 'handler-growth', culprit: { function: 'ensureCors', file: 'lib/cors.js' } },
  // About 1 KB kept per request at 400 req/s: 2 MB in 5 s, judged on the bytes kept per request in the second half.
  'hapi-request-log-leak': {
    category: 'memory-leak',
    culprit: { function: 'logRequest', file: 'lib/request-log.js' },
  },
  // Fastify's request objects, kept by an app Map: no app frame allocated them; the only app function that stores is named.
  'fastify-request-registry-leak': { category: 'memory-leak', culprit: { function: 'registerRequest', file: 'lib/registry.js' } },
  // Commands on one long-lived store connection, awaited once per product: the loop that serialises them.
  'stock-per-item': { category: 'io-wait', culprit: { function: 'stockLevels', file: 'lib/inventory.js' } },
  // The same page reading the eight levels in one command (a 25 ms store): the wait, with no loop blamed.
  'stock-batched': { category: 'io-wait', culprit: { function: 'command', file: 'lib/store-client.js' } },
  // Every request gets the 404 page (the API lives under /api/v1): the run measured that, and says so instead of "healthy".
  'api-prefix-404': { category: 'off-target-load' },
  // Hono and its adapter imported as ES modules: found through the server's request listener.
  'hono-esm-hung-export': { category: 'unanswered-requests', culprit: { function: 'exportReport', file: 'lib/exports.js' } },
  // A koa-mount sub-app's middleware: koa-mount composed it once, found through its closure.
  'koa-mount-hung-admin': { category: 'unanswered-requests', culprit: { function: 'requireSession', file: 'lib/admin.js' } },
  // Still pending after `await next()`: the middleware, not the route handler that finished.
  'koa-after-next-cache': { category: 'unanswered-requests', culprit: { function: 'cacheResponse', file: 'lib/cache.js' } },
  // One IPC round trip to a forked dictionary per word, awaited in a loop: the loop is named, not the send.
  'spellcheck-ipc': { category: 'io-wait', culprit: { function: 'checkText', file: 'lib/spell.js' } },
  // A server setting, not a call on the request path: no culprit, the setting is named in the evidence.
  'socket-cap-api': { category: 'connection-churn' },
  // app.param per request: the param's callbacks pile up (Express keeps them per param name, not in the stack).
  'express5-param-growth': { category: 'handler-growth', culprit: { function: 'bindOrderParam', file: 'lib/orders.js' } },
  // Hono as ES modules with no middleware: the handler waits before it reads its request (the app caught at its first fetch).
  'hono-esm-webhook-lock': { category: 'unanswered-requests', culprit: { function: 'receiveWebhook', file: 'lib/webhooks.js' } },
  // A Hono middleware still pending after `await next()`: it, not the route handler that answered.
  'hono-after-next-audit': { category: 'unanswered-requests', culprit: { function: 'auditTrail', file: 'lib/audit.js' } },
  // Two commands started together from two lines on one store connection, one request at a time: two waits per request, not one multi-write command.
  'stock-quote-together': { category: 'io-wait', culprit: { function: 'command', file: 'lib/store-client.js' } },
  // The same two commands, answered by the store in ONE chunk of two lines: still two waits per request.
  'stock-quote-one-chunk': { category: 'io-wait', culprit: { function: 'command', file: 'lib/store-client.js' } },
  // A kept worker pool the profile never catches handing over (postMessage): the message waits name where requests enter it.
  'worker-render-queue': { category: 'off-loop-cpu', culprit: { function: 'render', file: 'lib/renderer.js' } },
  // Express 4 ignores a rejected handler's promise: the handler named, the error that rejected it said (followed after the load).
  'express4-async-rejection': { category: 'unanswered-requests', culprit: { function: 'showShipment', file: 'lib/shipments.js' } },
  // The catch that swallows the error, in a helper the route hands the response to, not the route connect last called.
  'connect-swallowed-error': { category: 'unanswered-requests', culprit: { function: 'sendReceipt', file: 'lib/receipts.js' } },
  // A pattern built per request by one module and first run (compiled) by another: the builder causes it, the highlighter pays.
  'glossary-highlight': { category: 'event-loop-blocking', culprit: { function: 'glossaryPattern', file: 'lib/glossary.js' } },
  // A session store's client connected, asked once and closed per request: the connect site, not the write. Also the
  // regression test of an agent leak: its per-socket learning timer kept each closed socket 5 s, read as a heap leak that led.
  'session-client-per-request': { category: 'connection-churn', culprit: { function: 'openSessionClient', file: 'lib/session-client.js' } },
  // A slot held across two remote calls in turn: no single call site is pinned at the slots; where requests wait for one.
  'quote-slot-two-upstreams': { category: 'io-wait', culprit: { function: 'quotePdf', file: 'lib/quotes.js' } },
  'tenant-route-table': { category: 'event-loop-blocking', culprit: { function: 'mountTenantPages', file: 'lib/tenants.js' } },
  // The listener closures allocate what is kept; the function that adds them to the shared signal is named, the signal as the holder.
  'upload-abort-listeners': { category: 'memory-leak', culprit: { function: 'trackUpload', file: 'lib/drain.js' } },
  // One route of four awaits six lookups in turn; the typical request answers at once (p50 well under one lookup).
  'invoice-lines-minority': { category: 'io-wait', culprit: { function: 'invoiceWithProducts', file: 'lib/invoices.js' } },
  // fetch (undici) connects from its own dispatcher: the sockets are counted against the app's fetch calls.
  'fetch-close-upstream': { category: 'connection-churn', culprit: { function: 'fetchRate', file: 'lib/rates.js' } },
  // The npm undici package (a Pool's request) never goes through node:http: its calls come from its channels.
  'undici-rate-gate': { category: 'io-wait', culprit: { function: 'quoteShipping', file: 'lib/shipping.js' } },
};

/** Extra checks on the main finding's evidence, where the scenario is about a kind of work. */
const evidence: Record<string, (e: Record<string, unknown>) => void> = {
  'regex-validate': (e) => assert.equal(e.work, 'regex', `work ${String(e.work)}`),
  'gzip-export': (e) => assert.equal(e.api, 'zlib.gzipSync'),
  'readfile-config': (e) => assert.equal(e.api, 'fs.readFileSync'),
  'stdout-logging': (e) => assert.equal(e.api, 'fs.writeSync (stdout)'),
  'keepalive-off-upstream': (e) => assert.equal(e.newConnectionShare, 1),
  'koa-middleware-growth': (e) => assert.equal(e.framework, 'koa'),
  'hung-branch': (e) => {
    assert.equal(e.waitingAtEnd, 20);
    assert.equal(e.unansweredRoute, 'GET /');
  },
  // A default run (no --heap): what holds the entries is named too.
  'audit-closure-leak': (e) => {
    const held = e.heldIn as { name?: string; scope?: string; enclosing?: string } | undefined;
    assert.deepEqual([held?.name, held?.scope, held?.enclosing], ['entries', 'closure', 'createAuditTrail'], JSON.stringify(held));
  },
  'express-hung-route': (e) => assert.equal(e.unansweredRoute, 'GET /invoices/:id'),
  // No route pattern matched where the middleware stopped them: the URL's shape, its id as `:id`.
  'polka-hung-middleware': (e) => assert.equal(e.unansweredRoute, 'GET /orders/:id'),
  'connect-hung-middleware': (e) => assert.equal(e.unansweredRoute, 'GET /cart'),
  'express4-hung-middleware': (e) => assert.equal(e.unansweredRoute, 'GET /reports/:id'),
  'fastify-hung-route': (e) => assert.equal(e.unansweredRoute, 'GET /accounts/:id'),
  'close-header-api': (e) => {
    assert.equal(e.connectionsPerRequest, 1);
    assert.equal(e.closedByAppShare, 1);
  },
  'hapi-request-log-leak': (e) => {
    assert.equal(e.basis, 'per-request');
    const held = e.heldIn as { name?: string; scope?: string } | undefined;
    assert.deepEqual([held?.name, held?.scope], ['requestLog', 'module'], JSON.stringify(held));
  },
  // The retained view names no app function (keptBy 'source'), or the storer when the Map's growth was sampled in it.
  'fastify-request-registry-leak': (e) => {
    const held = e.heldIn as { name?: string; scope?: string } | undefined;
    assert.deepEqual([held?.name, held?.scope], ['active', 'module'], JSON.stringify(held));
  },
  'polka-route-growth': (e) => {
    assert.equal(e.framework, 'polka');
    assert.equal(e.path, '/t/acme');
  },
  'permissions-deep-copy': (e) => assert.equal(e.deepCopy, true),
  'schema-regex': (e) => {
    assert.equal(e.work, 'regex');
    assert.equal(e.pattern, '^(\\w+\\s?)*$');
    assert.equal(e.workPackage, 'fastify');
  },
  'rule-compile': (e) => assert.equal(e.work, 'compile', `work ${String(e.work)}`),
  'serial-lookups': (e) => {
    assert.equal(e.sequential, true);
    assert.equal((e.awaitedIn as { function?: string } | undefined)?.function, 'loadProfile');
  },
  // The server-side latency is the API's (~200 ms), not the in-process flags service's (~8 ms).
  'flags-lock': (e) => assert.ok((e.latencyP50Ms as number) > 50, `latencyP50Ms ${String(e.latencyP50Ms)}`),
  'capped-agent-upstream': (e) => {
    // The agent's 2 sockets, not the upstream's ~20 ms, set the latency; and the calls that waited
    // for a freed socket reused it (no outgoing connection churn beside the finding).
    assert.equal(e.maxSockets, 2);
    const upstream = e.upstream as { queuedMs: number; onSocketMs: number };
    assert.ok(upstream.queuedMs > 2 * upstream.onSocketMs, `queued ${upstream.queuedMs} ms, on the socket ${upstream.onSocketMs} ms`);
    const also = (e.alsoFound ?? []) as { category: string }[];
    assert.ok(!also.some((f) => f.category === 'connection-churn'), JSON.stringify(also));
  },
  'limited-lookups': (e) => {
    const behind = e.queuedBehind as number;
    assert.ok(behind >= 1.5 && behind <= 2.5, `queued behind ${behind}`);
    assert.equal((e.waitsAt as { awaited?: string } | undefined)?.awaited, 'limit(() => requestRegion(port, ip))');
    assert.equal((e.slotHeldBy as { function?: string } | undefined)?.function, 'requestRegion');
  },
  'undici-rate-gate': (e) => {
    assert.equal((e.upstream as { api?: string } | undefined)?.api, 'undici', JSON.stringify(e.upstream));
    const behind = e.queuedBehind as number;
    assert.ok(behind >= 2.5 && behind <= 4, `queued behind ${behind}`);
    assert.equal((e.waitsAt as { line?: number } | undefined)?.line, 16);
  },
  'fetch-close-upstream': (e) => {
    assert.equal(e.api, 'fetch');
    assert.ok((e.newConnectionShare as number) >= 0.9, `new connections ${String(e.newConnectionShare)}`);
  },
  'udp-stats-leak': (e) => {
    assert.equal(e.resource, 'UDPWrap');
    assert.equal(e.api, 'dgram.createSocket');
  },
  'worker-clone-quote': (e) => assert.equal(e.work, 'clone'),
  'yield-per-item': (e) =>
    assert.ok((e.immediatesQueuedShare as number) >= 0.8, `immediates queued at ${String(e.immediatesQueuedShare)} of the samples`),
  // Fewer than half of its timers are pending: each fires and is replaced.
  'delivery-retry-loop': (e) => assert.equal(e.rearmed, true),
  'pool-checkout': (e) => {
    assert.equal(e.poolSize, 2);
    assert.equal((e.waitsAt as { awaited?: string } | undefined)?.awaited, 'db.slots.acquire()');
    assert.equal((e.slotHeldBy as { function?: string } | undefined)?.function, 'query');
  },
  'slugify-per-item': (e) => {
    assert.equal((e.calledInLoop as { function?: string; line?: number } | undefined)?.function, 'search');
    const path = e.callPath as { function: string; callsPerRequest?: number }[];
    assert.deepEqual(
      path.slice(-2).map((c) => c.function),
      ['search', 'slugify'],
    );
    // One search per request over 3,000 products: counted, not sampled (a callee V8 inlines again
    // while the window runs goes uncounted for those calls: 2,899 was seen), and a search that
    // was running when the counters were reset adds its later slugify calls without its own call
    // (3,003.5 was seen, with some hundred searches in the window; 3,121.8 with about thirty in the
    // 0.6 s window on a machine at load average 17 (0.5 s now): one search's calls over thirty).
    const perCall = e.helperCallsPerCallerCall as number;
    assert.ok(perCall > 2000 && perCall <= 3300, `slugify calls per call of search: ${perCall}`);
    assert.ok((path.at(-1)?.callsPerRequest ?? 0) > 1000, `slugify calls per request: ${String(path.at(-1)?.callsPerRequest)}`);
  },
  // Most of the process's CPU ran off the loop (a share: the cores the pool gets depend on the machine's other tenants).
  'threadpool-login': (e) => {
    assert.ok(
      (e.offLoopCores as number) > 0.5 * (e.processCores as number),
      `offLoopCores ${String(e.offLoopCores)} of ${String(e.processCores)}`,
    );
    if (e.api !== undefined) assert.equal(e.api, 'crypto.pbkdf2');
  },
  'export-hung-aliases': (e) => assert.equal(e.unansweredRoute, 'GET /export/:format, /reports/:id/export/:format'),
  'fastify4-quota-hook': (e) => assert.equal(e.unansweredRoute, 'GET /orders/:id'),
  'koa2-hung-lookup': (e) => assert.equal(e.unansweredRoute, 'GET /products/:id'),
  'hapi-hung-ext': (e) => assert.equal(e.unansweredRoute, 'GET /invoices/{id}'),
  'hono-hung-route': (e) => assert.equal(e.unansweredRoute, 'GET /users/:id/avatar'),
  'restify-hung-route': (e) => assert.equal(e.unansweredRoute, 'GET /tickets/:id'),
  // About one registration per request, said per request.
  'hapi-ext-growth': (e) => {
    assert.equal(e.framework, 'hapi');
    assert.equal(e.path, 'onPreResponse');
    const perRequest = e.perRequest as number;
    assert.ok(perRequest > 0.8 && perRequest <= 1.05, `perRequest ${perRequest}`);
  },
  'api-prefix-404': (e) => {
    assert.equal(e.topStatus, 404);
    assert.ok((e.offTargetShare as number) >= 0.99, `off-target share ${String(e.offTargetShare)}`);
  },
  'webhook-buffer-archive': (e) => {
    assert.equal(e.externalGrowthBytes !== undefined, true, "the Buffers' bytes are off the heap");
    const held = e.heldIn as { name?: string; scope?: string } | undefined;
    assert.deepEqual([held?.name, held?.scope], ['deliveries', 'module'], JSON.stringify(held));
  },
  'stock-per-item': (e) => {
    assert.equal(e.sequential, true);
    const upstream = e.upstream as { api: string; callsPerRequest: number };
    assert.equal(upstream.api, 'socket');
    assert.ok(upstream.callsPerRequest > 6 && upstream.callsPerRequest < 9.5, `${upstream.callsPerRequest} commands per request`);
    assert.deepEqual(e.serialisedBy, { function: 'stockLevels', file: 'lib/inventory.js', line: 6 });
    assert.equal((e.perItemCall as { line?: number } | undefined)?.line, 7);
    assert.equal((e.waitsIn as { function?: string } | undefined)?.function, 'command');
  },
  'spellcheck-ipc': (e) => {
    assert.equal(e.sequential, true);
    const upstream = e.upstream as { api: string; origin: string; callsPerRequest: number };
    assert.equal(upstream.api, 'ipc');
    assert.equal(upstream.origin, 'child process dictionary.js');
    assert.ok(upstream.callsPerRequest > 6 && upstream.callsPerRequest < 10.5, `${upstream.callsPerRequest} messages per request`);
    assert.deepEqual(e.serialisedBy, { function: 'checkText', file: 'lib/spell.js', line: 29 });
    assert.equal((e.waitsIn as { function?: string } | undefined)?.function, 'isKnown');
  },
  'stock-batched': (e) => {
    const upstream = e.upstream as { api: string; callsPerRequest: number };
    assert.equal(upstream.api, 'socket');
    assert.ok(upstream.callsPerRequest < 1.3, `${upstream.callsPerRequest} commands per request`);
    assert.equal(e.sequential, undefined);
    assert.equal(e.serialisedBy, undefined);
  },
  'hono-esm-hung-export': (e) => assert.equal(e.unansweredRoute, 'GET /exports/:id/:format'),
  'koa-mount-hung-admin': (e) => assert.equal(e.unansweredRoute, 'GET /admin/reports/:id'),
  'koa-after-next-cache': (e) => assert.equal(e.unansweredRoute, 'GET /products/:id'),
  'socket-cap-api': (e) => {
    assert.equal(e.maxRequestsPerSocket, 4);
    assert.ok(Math.abs((e.connectionsPerRequest as number) - 0.25) < 0.05, String(e.connectionsPerRequest));
  },
  'express5-param-growth': (e) => assert.deepEqual([e.method, e.path], ['PARAM', ':orderId']),
  'hono-esm-webhook-lock': (e) => assert.equal(e.unansweredRoute, 'GET /hooks/:source'),
  'hono-after-next-audit': (e) => assert.equal(e.unansweredRoute, 'GET /orders/:id'),
  'stock-quote-together': (e) => {
    const upstream = e.upstream as { api: string; callsPerRequest: number };
    assert.equal(upstream.api, 'socket');
    assert.ok(upstream.callsPerRequest > 1.7 && upstream.callsPerRequest < 2.3, `${upstream.callsPerRequest} commands per request`);
    assert.equal(e.sequential, undefined);
  },
  'stock-quote-one-chunk': (e) => {
    const upstream = e.upstream as { api: string; callsPerRequest: number };
    assert.equal(upstream.api, 'socket');
    assert.ok(upstream.callsPerRequest > 1.7 && upstream.callsPerRequest < 2.3, `${upstream.callsPerRequest} commands per request`);
    assert.equal(e.sequential, undefined);
  },
  'worker-render-queue': (e) => {
    assert.equal(e.kind, 'worker-threads');
    assert.equal(e.sentAt, 'lib/renderer.js:35');
    assert.ok((e.workerMessagesPerRequest as number) > 0.5, `${String(e.workerMessagesPerRequest)} messages per request`);
  },
  // The rejection's throw site is said when the watch followed it (thrownAt); in 2 of 5 runs here the
  // watch saw no pause in the extra load (left open in the report), so only the route is asserted.
  'express4-async-rejection': (e) => {
    assert.equal(e.unansweredRoute, 'GET /shipments/:id');
    // One lookup in 25 rejects, so the extra load after the measured one rejects too: the pauses are seen (issue 18).
    assert.equal(e.thrownAt, 'carrierStatus (lib/carrier.js:11)');
    assert.equal(e.caughtInStack, false);
    // The route's count is the measured load's, the extra load's told apart (meta.throwWindow.until).
    assert.equal(e.unansweredWindow, 'measured');
  },
  'connect-swallowed-error': (e) => {
    assert.equal(e.thrownAt, 'renderReceipt (lib/receipts.js:16)');
    assert.equal(e.droppedAt, 'sendReceipt (lib/receipts.js:27)');
    assert.equal(e.caughtInStack, true);
  },
  'glossary-highlight': (e) => {
    assert.equal(e.compiled, 'regexp');
    assert.deepEqual(e.paidIn, { function: 'highlight', file: 'lib/highlight.js', line: 4 });
    assert.deepEqual(e.builtVia, { function: 'showHighlighted', file: 'server.js', line: 18 });
    const path = e.callPath as { function: string }[];
    assert.deepEqual(
      path.map((s) => s.function),
      ['showHighlighted', 'highlight'],
    );
  },
  'session-client-per-request': (e) => {
    assert.ok((e.connectionsPerRequest as number) > 0.8, `${String(e.connectionsPerRequest)} connections per request`);
    assert.equal((e.connectCaller as { function?: string } | undefined)?.function, 'lookupSession');
  },
  'quote-slot-two-upstreams': (e) => {
    assert.equal(e.poolSize, 3);
    assert.equal((e.waitsAt as { awaited?: string } | undefined)?.awaited, 'renderSlots.take()');
    assert.equal((e.heldAcross as unknown[] | undefined)?.length, 2);
  },
  // The router's work runs with no app frame on the stack: the handler, whose time is the
  // response's writes, is not the culprit (before, it was named with the socket-writes advice).
  'tenant-route-table': (e) => {
    assert.ok(e.noAppCode === true || e.work === 'deps', `work ${String(e.work)}, noAppCode ${String(e.noAppCode)}`);
    if (e.work === 'regex') assert.ok((e.routePatterns as number) >= 20, `${String(e.routePatterns)} route patterns`);
  },
  'upload-abort-listeners': (e) => {
    const held = e.heldIn as { name?: string; kind?: string; scope?: string } | undefined;
    assert.deepEqual([held?.name, held?.kind, held?.scope], ['draining.signal', 'EventTarget', 'module'], JSON.stringify(held));
  },
  'invoice-lines-minority': (e) => {
    assert.equal(e.sequential, true);
    assert.ok(e.slowMinority !== undefined, 'judged on the slow minority, not the p50');
    assert.equal((e.serialisedBy as { line?: number } | undefined)?.line, 8);
  },
};

function listScenarios(): string[] {
  return readdirSync(scenariosDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(scenariosDir, d.name, 'hotpath.json')))
    .map((d) => d.name)
    .sort();
}

/** Runs `cd <scenario> && hotpath run <hotpath.json args> --json -- node server.js`. */
function runScenario(name: string): Promise<{ report: Report; stderr: string }> {
  const dir = join(scenariosDir, name);
  const { args } = JSON.parse(readFileSync(join(dir, 'hotpath.json'), 'utf8')) as { args: string[] };
  return runReport<Report>([...args, '--out', out], [process.execPath, 'server.js'], dir);
}

test('every scenario directory has an expectation', () => {
  assert.deepEqual(listScenarios(), Object.keys(expected).sort());
});

for (const [name, want] of Object.entries(expected)) {
  const label =
    want === 'healthy'
      ? 'healthy, no warning or critical finding'
      : `${want.category}${want.culprit ? ` in ${[want.culprit.function].flat().join('/')} (${want.culprit.file})` : ''}${want.knownGap ? ' [known gap]' : ''}`;
  const major = Number(process.versions.node.split('.')[0]);
  const fails = want !== 'healthy' && want.failsFromNode !== undefined && major >= want.failsFromNode.major;
  test(
    `scenario ${name}: ${label}`,
    { timeout: 150_000, ...(fails ? { skip: `known to fail: ${want.failsFromNode!.reason}` } : {}) },
    async () => {
      const { report, stderr } = await runScenario(name);
      const main = checkDiagnosis(report, stderr, want === 'healthy');
      if (want === 'healthy' || main === undefined) return;
      const summary = findingsSummary(report);
      assert.equal(main.category, want.category, summary);
      evidence[name]?.(main.evidence as Record<string, unknown>);
      if (!want.culprit) return;
      const named = `${main.culprit?.function} ${main.culprit?.file}`;
      const wanted = [want.culprit.function].flat().map((f) => `${f} ${want.culprit!.file}`);
      const gap = want.knownGap ? `${want.knownGap.accepts.function} ${want.knownGap.accepts.file}` : undefined;
      if (gap !== undefined && named === gap) console.log(`# ${name}: known gap, culprit ${named}: ${want.knownGap!.reason}`);
      assert.ok(
        wanted.includes(named) || named === gap,
        `culprit ${named}, expected ${wanted.join(' or ')}${gap ? ` (or, known gap, ${gap})` : ''}\n${summary}`,
      );
      assert.ok((main.culprit?.line ?? 0) > 0, summary);
    },
  );
}
