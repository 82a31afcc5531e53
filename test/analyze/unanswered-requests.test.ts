import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unansweredRequests } from '../../src/analyze/unanswered-requests.js';
import { syntheticRun, SYNTHETIC_START } from '../fixtures/telemetry/synthetic-run.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { UnansweredRoute } from '../../src/agent/protocol.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';
import type { ProfileRef, RunData } from '../../src/run-dir/run-data.js';

/** A run whose load saw `share` of its requests time out after `timeoutMs`. */
function withTimeouts(run: RunData, share: number, timeoutMs = 2000): RunData {
  const load = run.load!;
  const timeouts = Math.round(load.requests.total * share);
  load.errors = { ...load.errors, total: load.errors.total + timeouts, timeouts };
  load.requests = { ...load.requests, sent: load.requests.total + timeouts };
  load.options = { ...load.options, timeoutMs };
  return run;
}

for (const noise of NOISE_LEVELS) {
  test(`unanswered: 2 % of requests time out while the rest answer in ms (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const [f] = unansweredRequests(withTimeouts(syntheticRun({ seed, noise, rps: 500, latencyMs: 1 }), 0.02));
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.category, 'unanswered-requests');
      assert.equal(f.severity, 'critical');
      assert.ok(Math.abs((f.evidence.unansweredShare as number) - 0.02) < 0.002);
      assert.match(f.summary, /left hanging, not slow/);
      assert.match(f.recommendation, /res\.end\(\)/);
    }
  });
}

test('unanswered: two in a thousand is a warning; none, or fewer than three, is nothing', () => {
  assert.equal(unansweredRequests(withTimeouts(syntheticRun({ seed: 1, rps: 2000, latencyMs: 1 }), 0.002))[0]?.severity, 'warning');
  assert.deepEqual(unansweredRequests(syntheticRun({ seed: 1, rps: 2000, latencyMs: 1 })), []);
  assert.deepEqual(unansweredRequests(withTimeouts(syntheticRun({ seed: 1, rps: 20, durationS: 5, latencyMs: 1 }), 0.02)), []);
});

test('unanswered: timeouts at the tail of a slow server are slowness, not hanging', () => {
  // Answered requests take ~900 ms at p99 against a 2 s timeout: the timeouts are its tail.
  const run = withTimeouts(syntheticRun({ seed: 1, rps: 50, latencyMs: 300, latencyP99Factor: 3 }), 0.05);
  assert.deepEqual(unansweredRequests(run), []);
});

test('unanswered: before any times out, every connection stuck on a hung request stops the responses while the loop idles', () => {
  const run = syntheticRun({
    seed: 1,
    durationS: 8,
    rps: (p) => (p < 0.3 ? 800 : 0),
    elu: (p) => (p < 0.3 ? 0.6 : 0.62),
    cores: (p) => (p < 0.3 ? 0.6 : 0.02),
    latencyMs: 1,
  });
  run.load!.requests = { ...run.load!.requests, inFlightAtEnd: run.load!.options.connections };
  const [f] = unansweredRequests(run);
  assert.ok(f, JSON.stringify(run.load!.timeline.map((p) => p.requests)));
  assert.equal(f.severity, 'critical');
  assert.equal(f.evidence.waitingAtEnd, run.load!.options.connections);
  assert.ok((f.evidence.silentSeconds as number) >= 2);
  assert.ok((f.evidence.tailBusy as number) < 0.1, 'idle by its CPU, whatever ELU read');
  assert.match(f.summary, /Responses stopped after \d+ s/);
  // A loop blocked at the end (busy, not idle) is a stall, not hanging requests.
  const blocked = syntheticRun({ seed: 1, durationS: 8, rps: (p) => (p < 0.3 ? 800 : 0), elu: 1, cores: 1, latencyMs: 1 });
  blocked.load!.requests = { ...blocked.load!.requests, inFlightAtEnd: blocked.load!.options.connections };
  assert.deepEqual(unansweredRequests(blocked), []);
});

test('unanswered: hung requests the run ended on before they stopped the responses (a slower machine) are told by how long the oldest waited against the answered p99', () => {
  // Answered all along (no silent second), every connection waiting at the end, the oldest for 4.2 s against a ~3 ms p99.
  const run = (oldestMs: number, elu = 0.3) => {
    const r = syntheticRun({ seed: 1, cwd: '/srv/app', durationS: 5, rps: 1000, elu, cores: elu, latencyMs: 1 });
    r.load!.requests = { ...r.load!.requests, inFlightAtEnd: r.load!.options.connections };
    r.threads[0].samples.at(-1)!.unanswered = [{ method: 'GET', route: '/', count: r.load!.options.connections, oldestMs }];
    return r;
  };
  const [f] = unansweredRequests(run(4200));
  assert.equal(f?.severity, 'critical');
  assert.deepEqual(
    [f.evidence.waitingAtEnd, f.evidence.oldestWaitMs, f.evidence.unansweredRoute],
    [run(4200).load!.options.connections, 4200, 'GET /'],
  );
  assert.match(f.summary, /the oldest request for 4\.2 s, \d+ times the answered requests' p99/);
  // Requests cut by the load's end after a few ms are no hang; nor is a wait on a loop still busy at the end (a block).
  assert.deepEqual(unansweredRequests(run(40)), []);
  assert.deepEqual(unansweredRequests(run(4200, 1)), []);
});

test('unanswered: hung requests waiting on outgoing calls that never end name the calling function, and sockets held by unread responses', () => {
  const checkStock = { function: 'checkStock', file: '/srv/app/lib/inventory.js', line: 8, column: 5 };
  const make = (queuedShare: number | undefined) => {
    const run = syntheticRun({
      seed: 1,
      cwd: '/srv/app',
      durationS: 8,
      rps: (p) => (p < 0.3 ? 800 : 0),
      elu: (p) => (p < 0.3 ? 0.6 : 0.62),
      cores: (p) => (p < 0.3 ? 0.6 : 0.02),
      latencyMs: 1,
      outgoing: [
        {
          api: 'http',
          origin: '127.0.0.1:4100',
          perRequest: 1,
          msEach: 2,
          site: checkStock,
          maxSockets: 10,
          ...(queuedShare !== undefined ? { queuedShare } : {}),
        },
      ],
    });
    const connections = run.load!.options.connections;
    run.load!.requests = { ...run.load!.requests, inFlightAtEnd: connections };
    // The last report: as many calls as hung requests started and never answered.
    const last = run.threads[0].growth.at(-1)!.outgoing![0];
    last.count = last.completed + connections;
    if (queuedShare !== undefined) last.queued = connections;
    return run;
  };
  const [f] = unansweredRequests(make(1));
  assert.equal(f.culprit?.function, 'checkStock');
  assert.equal(f.culprit?.file, 'lib/inventory.js');
  assert.equal(f.evidence.pendingCalls, make(1).load!.options.connections);
  assert.equal(f.evidence.maxSockets, 10);
  assert.match(f.summary, /still waiting for a response at the end .*queued in their http\.Agent behind its 10 sockets/);
  assert.match(f.recommendation, /res\.resume\(\)/);
  // Not queued: the upstream never answered; the advice is a timeout.
  const [g] = unansweredRequests(make(undefined));
  assert.equal(g.culprit?.function, 'checkStock');
  assert.match(g.recommendation, /AbortSignal\.timeout/);
  assert.doesNotMatch(g.recommendation, /res\.resume/);
});

/** A CPU profile of the target thread: `(anonymous)` (server.js:9) calling handlePing (lib/ping.js:3), plus express's own code. */
function routeProfile(cwd: string): ProfileRef {
  const url = (f: string) => pathToFileURL(join(cwd, f)).href;
  const frame = (functionName: string, scriptId: string, u: string, line: number, column: number) => ({
    functionName,
    scriptId,
    url: u,
    lineNumber: line - 1,
    columnNumber: column - 1,
  });
  const nodes = [
    { id: 1, callFrame: frame('(root)', '0', '', 0, 0), hitCount: 0, children: [2, 5] },
    { id: 2, callFrame: frame('emit', '3', 'node:events', 500, 1), hitCount: 1, children: [3] },
    { id: 3, callFrame: frame('', '40', url('server.js'), 9, 19), hitCount: 2, children: [4] },
    { id: 4, callFrame: frame('handlePing', '41', url('lib/ping.js'), 3, 20), hitCount: 30, children: [] },
    { id: 5, callFrame: frame('(idle)', '0', '', 0, 0), hitCount: 10, children: [] },
  ];
  const samples = nodes.flatMap((n) => Array.from({ length: n.hitCount }, () => n.id));
  const path = join(mkdtempSync(join(tmpdir(), 'hotpath-unanswered-')), 'cpu-4242-0.cpuprofile');
  writeFileSync(
    path,
    JSON.stringify({ nodes, startTime: 1e9, endTime: 1e9 + samples.length * 1000, samples, timeDeltas: samples.map(() => 1000) }),
  );
  return { kind: 'cpu', pid: 4242, threadId: 0, path, start: SYNTHETIC_START, end: SYNTHETIC_START + 10_000 };
}

/** A stuck closed-model run whose last sample carries the agent's unanswered routes. */
function stuckWith(routes: UnansweredRoute[], profiles: ProfileRef[] = []): RunData {
  const run = syntheticRun({
    seed: 1,
    cwd: '/srv/app',
    durationS: 8,
    rps: (p) => (p < 0.3 ? 800 : 0),
    elu: 0.6,
    cores: (p) => (p < 0.3 ? 0.6 : 0.02),
    latencyMs: 1,
    profiles,
  });
  run.load!.requests = { ...run.load!.requests, inFlightAtEnd: run.load!.options.connections };
  run.threads[0].samples.at(-1)!.unanswered = routes;
  return run;
}

test('unanswered: the route the hung requests took and its handler, located through the CPU profile of the same thread', () => {
  const cwd = '/srv/app';
  const profile = routeProfile(cwd);
  const [f] = unansweredRequests(
    stuckWith(
      [
        {
          method: 'GET',
          route: '/invoices/:id',
          pattern: true,
          count: 18,
          oldestMs: 4800,
          handler: { name: 'showInvoice', scriptId: '41', line: 3, column: 20 },
        },
        { method: 'GET', route: '/health', pattern: true, count: 2 },
      ],
      [profile],
    ),
  );
  assert.equal(f.category, 'unanswered-requests');
  // scriptId 41 is lib/ping.js in this profile: the file comes from the profile, the name from the agent.
  assert.deepEqual(f.culprit, { function: 'showInvoice', file: 'lib/ping.js', line: 3, column: 20 });
  assert.equal(f.evidence.unansweredRoute, 'GET /invoices/:id');
  assert.equal(f.evidence.routeUnanswered, 18);
  assert.equal(f.evidence.unansweredSeen, 20);
  assert.match(
    f.summary,
    /18 of the 20 requests the server left waiting were `GET \/invoices\/:id` \(a route of the app's router\), last handled by its handler showInvoice \(lib\/ping\.js:3\)/,
  );
});

test('unanswered: a middleware or a hook that holds the requests is called one, not their handler', () => {
  const held = (handlerKind: 'middleware' | 'hook') =>
    unansweredRequests(
      stuckWith(
        [
          {
            method: 'GET',
            route: '/invoices/:id',
            pattern: true,
            count: 20,
            handlerKind,
            handler: { name: 'showInvoice', scriptId: '41', line: 3, column: 20 },
          },
        ],
        [routeProfile('/srv/app')],
      ),
    )[0];
  assert.match(held('middleware').summary, /last handled by its middleware showInvoice \(lib\/ping\.js:3\)/);
  assert.equal(held('middleware').evidence.handlerKind, 'middleware');
  assert.match(held('hook').summary, /last handled by its hook showInvoice \(lib\/ping\.js:3\)/);
});

test('unanswered: an anonymous request listener that hands every request to one app function names that function', () => {
  const [f] = unansweredRequests(
    stuckWith(
      [{ method: 'GET', route: '/', count: 20, listener: true, handler: { name: '', scriptId: '40', line: 9, column: 19 } }],
      [routeProfile('/srv/app')],
    ),
  );
  assert.deepEqual(f.culprit, { function: 'handlePing', file: 'lib/ping.js', line: 3, column: 20 });
  assert.equal(f.evidence.calledFrom, '(anonymous) (server.js:9)');
  assert.match(
    f.summary,
    /taken by the server's request listener \(anonymous\) \(server\.js:9\) and handed to handlePing \(lib\/ping\.js:3\)/,
  );
});

test('unanswered: without a profile, or with a handler in node_modules, the route is named and no culprit invented', () => {
  const [f] = unansweredRequests(
    stuckWith([{ method: 'POST', route: '/upload', count: 20, handler: { name: 'upload', scriptId: '41', line: 3, column: 1 } }]),
  );
  assert.equal(f.culprit, undefined);
  assert.equal(f.evidence.unansweredRoute, 'POST /upload');
  assert.match(f.summary, /were `POST \/upload`, last handled by `upload`/);
  const [g] = unansweredRequests(
    stuckWith(
      [{ method: 'GET', route: '/', count: 20, handler: { name: 'handle', scriptId: '3', line: 500, column: 1 } }],
      [routeProfile('/srv/app')],
    ),
  );
  assert.equal(g.culprit, undefined, 'node:events is no app code');
});

test('unanswered: a handler whose script the CPU profile never sampled is found by the function ranges written for it', () => {
  const cwd = '/srv/app';
  const audit = pathToFileURL(join(cwd, 'lib/audit.js')).href;
  const other = pathToFileURL(join(cwd, 'lib/other.js')).href;
  const hung = {
    method: 'GET',
    route: '/invoices/{id}',
    pattern: true,
    count: 20,
    handler: { name: 'auditRequest', scriptId: '77', line: 14, column: 28 },
  };
  const run = stuckWith([hung], [routeProfile(cwd)]);
  // Function ranges are 0-based and begin at the function's start, V8's location at its parameters.
  run.functionRanges = {
    [other]: [['auditRequest', 2, 0, 5, 1, 1]],
    [audit]: [
      ['', 0, 0, 20, 0, 1],
      ['auditRequest', 13, 0, 16, 1, 40],
    ],
  };
  const [f] = unansweredRequests(run);
  assert.deepEqual(f.culprit, { function: 'auditRequest', file: 'lib/audit.js', line: 14, column: 28 });
  // Two scripts define it on that line: no guess.
  run.functionRanges[other] = [['auditRequest', 13, 0, 16, 1, 1]];
  assert.equal(unansweredRequests(run)[0].culprit, undefined);
});

type ThrowGroup = NonNullable<RunData['throws']>[number]['groups'][number];
const site = (fn: string, file: string, line: number, column: number, functionLine: number, functionColumn = 1) => ({
  function: fn,
  file: `file:///srv/app/${file}`,
  line,
  column,
  functionLine,
  functionColumn,
});
const internal = {
  function: 'processImmediate',
  file: 'node:internal/timers',
  line: 454,
  column: 9,
  functionLine: 438,
  functionColumn: 28,
};

/** A stuck run whose listener took one hung request per connection, then an extra load after it that left `extra` unanswered while the agent followed `groups`. */
function droppedRun(extra: number, groups: ThrowGroup[], answered = 240): RunData {
  const run = stuckWith([
    { method: 'GET', route: '/', count: 0, listener: true, handler: { name: '', scriptId: '40', line: 9, column: 19 } },
  ]);
  // The agent noted the measured load's hung requests (one per connection) and the extra load's.
  run.threads[0].samples.at(-1)!.unanswered![0].count = run.load!.requests.inFlightAtEnd + extra;
  run.meta.throwWindow = { from: SYNTHETIC_START + 8_200, answered, unanswered: 20 };
  run.throws = [{ pid: run.threads[0].pid, threadId: run.threads[0].threadId, followed: groups.reduce((a, g) => a + g.count, 0), groups }];
  return run;
}

test('unanswered: an error thrown once per request dropped and caught by a catch of the app names that catch', () => {
  const thrown = site('renderInvoice', 'lib/invoice.js', 14, 40, 13);
  const handler = site('handleInvoice', 'lib/invoice.js', 19, 3, 17);
  const caught = { ...site('handleInvoice', 'lib/invoice.js', 26, 5, 17) };
  const run = droppedRun(10, [
    // The same throw through two node frames: counted together.
    { count: 7, uncaught: false, frames: [thrown, handler, internal], handledAt: caught },
    { count: 3, uncaught: false, frames: [thrown, handler], handledAt: caught },
    // A validation error thrown and answered on every request: not where requests were dropped.
    {
      count: 250,
      uncaught: false,
      frames: [site('parseQuery', 'lib/query.js', 4, 11, 2)],
      handledAt: site('route', 'server.js', 12, 7, 10),
    },
  ]);
  const [f] = unansweredRequests(run);
  assert.deepEqual(f.culprit, { function: 'handleInvoice', file: 'lib/invoice.js', line: 26, column: 5 });
  assert.equal(f.evidence.thrownAt, 'renderInvoice (lib/invoice.js:14)');
  assert.equal(f.evidence.caughtInStack, true);
  assert.equal(f.evidence.throwsAfterLoad, 10);
  assert.equal(f.evidence.unansweredAfterLoad, 10);
  assert.match(
    f.summary,
    /10 requests were left unanswered while an error thrown in renderInvoice \(lib\/invoice\.js:14\) was caught 10 times by the catch of handleInvoice at lib\/invoice\.js:26/,
  );
});

test('unanswered: a rejection no app code handles is said, and the route handler known stays the culprit', () => {
  const run = stuckWith(
    [
      {
        method: 'GET',
        route: '/shipments/:id',
        pattern: true,
        count: 26,
        handler: { name: 'showShipment', scriptId: '41', line: 3, column: 20 },
      },
    ],
    [routeProfile('/srv/app')],
  );
  run.threads[0].samples.at(-1)!.unanswered![0].count = run.load!.requests.inFlightAtEnd + 6;
  run.meta.throwWindow = { from: SYNTHETIC_START + 8_200, answered: 306, unanswered: 20 };
  const thrown = site('carrierStatus', 'lib/carrier.js', 9, 27, 6);
  const nodeHandler = {
    function: 'promiseRejectHandler',
    file: 'node:internal/process/promises',
    line: 182,
    column: 3,
    functionLine: 181,
    functionColumn: 30,
  };
  run.throws = [
    {
      pid: run.threads[0].pid,
      threadId: 0,
      followed: 6,
      groups: [{ count: 6, uncaught: true, frames: [thrown, internal], handledAt: nodeHandler }],
    },
  ];
  const [f] = unansweredRequests(run);
  assert.equal(f.culprit?.function, 'showShipment');
  assert.equal(f.evidence.thrownAt, 'carrierStatus (lib/carrier.js:9)');
  assert.equal(f.evidence.caughtInStack, false);
  assert.equal(f.evidence.handledAt, undefined);
  assert.match(
    f.summary,
    /6 requests were left unanswered while an error thrown in carrierStatus \(lib\/carrier\.js:9\) was handled by no app code, 6 times/,
  );
});

test('unanswered: throws far from one per request dropped, or too few requests dropped after the load, name nothing new', () => {
  const thrown = site('renderInvoice', 'lib/invoice.js', 14, 40, 13);
  const caught = site('handleInvoice', 'lib/invoice.js', 26, 5, 17);
  // 40 throws for 10 dropped requests: thrown by answered requests too.
  const [many] = unansweredRequests(droppedRun(10, [{ count: 40, uncaught: false, frames: [thrown], handledAt: caught }]));
  assert.equal(many.evidence.droppedAt, undefined);
  assert.notEqual(many.culprit?.line, 26);
  // One request dropped after the load: it could be one cut by the load's end.
  const [one] = unansweredRequests(droppedRun(1, [{ count: 1, uncaught: false, frames: [thrown], handledAt: caught }]));
  assert.equal(one.evidence.droppedAt, undefined);
  // No throw watch (a run before this change, or nothing was left unanswered): as before.
  const plain = droppedRun(10, []);
  delete plain.throws;
  assert.equal(unansweredRequests(plain)[0].evidence.droppedAt, undefined);
});

test('unanswered (issue 18): the requests the extra load left are counted once, as its own, not again with the measured load', () => {
  const thrown = site('renderInvoice', 'lib/invoice.js', 14, 40, 13);
  const caught = site('handleInvoice', 'lib/invoice.js', 26, 5, 17);
  const run = droppedRun(10, [{ count: 10, uncaught: false, frames: [thrown], handledAt: caught }]);
  const samples = run.threads[0].samples;
  const hung = run.load!.requests.inFlightAtEnd;
  const route = (count: number): UnansweredRoute => ({ method: 'GET', route: '/', count, listener: true });
  // The agent noted the measured load's requests as it ended, the extra load's once that was stopped.
  samples.at(-2)!.unanswered = [route(hung)];
  samples.at(-1)!.unanswered = [{ ...route(hung + 10), handler: { name: '', scriptId: '40', line: 9, column: 19 } }];
  run.meta.throwWindow = { ...run.meta.throwWindow!, until: samples.at(-1)!.t - 1 };
  const [f] = unansweredRequests(run);
  assert.equal(f.evidence.routeUnanswered, hung);
  assert.equal(f.evidence.unansweredSeen, hung);
  assert.equal(f.evidence.unansweredWindow, 'measured');
  assert.equal(f.evidence.unansweredAfterLoad, 10);
  assert.match(f.summary, new RegExp(`The ${hung} requests the measured load left waiting were \`GET /\``));
  assert.match(f.summary, /In a little more load after it \(not measured\), 10 requests were left unanswered/);
  assert.doesNotMatch(f.summary, new RegExp(`${hung + 10} requests`));
  // No error about once per dropped request: the route's sentence tells the extra load's apart.
  const plain = droppedRun(10, []);
  plain.threads[0].samples.at(-2)!.unanswered = [route(hung)];
  plain.threads[0].samples.at(-1)!.unanswered = [route(hung + 10)];
  plain.meta.throwWindow = { ...plain.meta.throwWindow!, until: plain.threads[0].samples.at(-1)!.t - 1 };
  const [g] = unansweredRequests(plain);
  assert.equal(g.evidence.routeUnansweredAfterLoad, 10);
  assert.match(
    g.summary,
    new RegExp(
      `The ${hung} requests the measured load left waiting were \`GET /\` \\(and 10 more of a little more load after it, not measured\\)`,
    ),
  );
  // Only the extra load's noted (the measured load's were never seen by the agent): said as such.
  const late = droppedRun(10, []);
  late.threads[0].samples.at(-1)!.unanswered = [route(10)];
  late.meta.throwWindow = { ...late.meta.throwWindow!, until: late.threads[0].samples.at(-1)!.t - 1 };
  const [h] = unansweredRequests(late);
  assert.equal(h.evidence.unansweredWindow, 'extra');
  assert.match(h.summary, /The 10 requests a little more load after it \(not measured\) left waiting were `GET \/`/);
});
