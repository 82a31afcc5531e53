import { test } from 'node:test';
import assert from 'node:assert/strict';
import { outgoingChurn } from '../../src/analyze/outgoing-churn.js';
import { connectionChurn } from '../../src/analyze/connection-churn.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';
import { syntheticCpuProfile } from '../fixtures/telemetry/synthetic-profile.js';

const executor = { function: '(anonymous)', file: '/srv/app/pricing.js', line: 6, column: 12 };
const fetchPrice = { function: 'fetchPrice', file: '/srv/app/pricing.js', line: 5, column: 10 };
const handler = { function: 'handler', file: '/srv/app/server.js', line: 20, column: 3 };
const call = (newConnectionShare: number | undefined, origin = 'https://pricing.internal:8443', api = 'http') => ({
  api,
  origin,
  perRequest: 1,
  msEach: 4,
  site: executor,
  stack: [executor, fetchPrice, handler],
  ...(newConnectionShare !== undefined ? { newConnectionShare } : {}),
});

for (const noise of NOISE_LEVELS) {
  test(`outgoing churn: a call per request that never reuses its connection names the calling code (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const [f, ...rest] = outgoingChurn(syntheticRun({ seed, noise, outgoing: [call(1)] }));
      assert.equal(rest.length, 0);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.code, 'HOTPATH_OUTGOING_CONNECTION_CHURN');
      assert.equal(f.category, 'connection-churn');
      assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['fetchPrice', 'pricing.js', 5]);
      assert.equal(f.evidence.newConnectionShare, 1);
      assert.ok(Math.abs((f.evidence.callsPerRequest as number) - 1) < 0.05, String(f.evidence.callsPerRequest));
      assert.match(f.summary, /went out on a new connection \(100 %\).*TCP and TLS handshake/);
      assert.match(f.recommendation, /keepAlive: true/);
    }
  });
}

test('outgoing churn: calls that reuse their connections, fetch (not measured) and a handful of calls are fine', () => {
  assert.deepEqual(outgoingChurn(syntheticRun({ seed: 1, outgoing: [call(0.02)] })), []);
  assert.deepEqual(outgoingChurn(syntheticRun({ seed: 1, outgoing: [call(undefined, 'http://pricing:8080', 'fetch')] })), []);
  assert.deepEqual(outgoingChurn(syntheticRun({ seed: 1, rps: 4, durationS: 5, outgoing: [call(1)] })), []);
});

test("outgoing churn: calls to the target's own port are not counted as inbound churn", () => {
  // Half the requests the server counted are the target calling itself on port 3000, each on a
  // new connection; the requests from outside reuse theirs.
  const run = syntheticRun({ seed: 2, connectionsPerRequest: 0.5, outgoing: [{ ...call(1, 'http://127.0.0.1:3000'), perRequest: 0.5 }] });
  assert.deepEqual(connectionChurn(run), []);
  const [f] = outgoingChurn(run);
  assert.ok(f);
  assert.ok(Math.abs((f.evidence.callsPerRequest as number) - 1) < 0.05, String(f.evidence.callsPerRequest));
  // The same counts without the self-calls are inbound churn.
  assert.equal(connectionChurn(syntheticRun({ seed: 2, connectionsPerRequest: 0.5 })).length, 1);
});

/** The run of an app that also runs a service on port 4000 in-process (a config service, an upstream stub). */
function withInProcessService(run: ReturnType<typeof syntheticRun>, drivenOnly: boolean): ReturnType<typeof syntheticRun> {
  const [thread] = run.threads;
  thread.listens.push({ ...thread.listens[0], port: 4000, t: thread.listens[0].t + 10 });
  if (drivenOnly) for (const s of thread.samples) if (s.http) s.http.drivenOnly = true;
  return run;
}

test('calls to an in-process service on another port are taken off the figures only while the agent counted that service in them', () => {
  const calls = { ...call(1, 'http://127.0.0.1:4000'), perRequest: 0.5 };
  // An older agent counted every server of the thread: half the requests are the service's.
  const old = withInProcessService(syntheticRun({ seed: 2, connectionsPerRequest: 0.5, outgoing: [calls] }), false);
  assert.deepEqual(connectionChurn(old), []);
  assert.ok(Math.abs((outgoingChurn(old)[0].evidence.callsPerRequest as number) - 1) < 0.05);
  // The agent left the service out (`drivenOnly`): the same figures are the driven server's
  // alone, nothing is taken off them.
  const scoped = withInProcessService(syntheticRun({ seed: 2, connectionsPerRequest: 0.5, outgoing: [calls] }), true);
  const [churn] = connectionChurn(scoped);
  assert.ok(churn, 'inbound churn is not hidden by calls that are not in the figures');
  assert.equal(
    churn.evidence.requests,
    scoped.threads[0].samples.reduce((n, s) => n + (s.http?.finished ?? 0), 0),
  );
  assert.ok(Math.abs((outgoingChurn(scoped)[0].evidence.callsPerRequest as number) - 0.5) < 0.05);
});

test('calls to the driven port itself are still taken off when the agent counted the driven server alone', () => {
  const run = withInProcessService(
    syntheticRun({ seed: 2, connectionsPerRequest: 0.5, outgoing: [{ ...call(1, 'http://127.0.0.1:3000'), perRequest: 0.5 }] }),
    true,
  );
  assert.deepEqual(connectionChurn(run), []);
  assert.ok(Math.abs((outgoingChurn(run)[0].evidence.callsPerRequest as number) - 1) < 0.05);
});

// A database or cache client connected per request (the socket-waits hook's commands that were the
// first on their socket): the connect site is named, with the code that makes a client per request.
const writeQuery = { function: 'query', file: '/srv/app/db-client.js', line: 30, column: 7 };
const openClient = { function: 'openClient', file: '/srv/app/db-client.js', line: 8, column: 20 };
const listOrders = { function: 'listOrders', file: '/srv/app/orders.js', line: 4, column: 9 };
const commands = (connectsPerRequest: number | undefined, perRequest = 1) => ({
  remote: '10.0.0.5:5432',
  perRequest,
  msEach: 3,
  site: writeQuery,
  stack: [writeQuery, listOrders],
  ...(connectsPerRequest !== undefined ? { connectsPerRequest, connectStack: [openClient, listOrders] } : {}),
});

for (const noise of NOISE_LEVELS) {
  test(`outgoing churn: a client connected per request names where it connects (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // Two queries per request on a connection opened for the request: judged per request served.
      const [f] = outgoingChurn(syntheticRun({ seed, noise, socketWaits: [commands(1, 2)] }));
      assert.equal(f?.category, 'connection-churn', `seed ${seed}`);
      assert.deepEqual([f.culprit?.function, f.culprit?.file], ['openClient', 'db-client.js']);
      assert.equal((f.evidence.connectCaller as { function: string }).function, 'listOrders');
      assert.equal(f.evidence.protocol, 'Postgres');
      assert.ok(Math.abs((f.evidence.connectionsPerRequest as number) - 1) < 0.05, String(f.evidence.connectionsPerRequest));
      assert.match(f.recommendation, /Create the database or cache client once/);
    }
  });
}

test('outgoing churn: a client on long-lived connections (a pool opened at startup) is no churn', () => {
  assert.deepEqual(outgoingChurn(syntheticRun({ seed: 1, socketWaits: [commands(0.01, 3)] })), []);
  assert.deepEqual(outgoingChurn(syntheticRun({ seed: 1, socketWaits: [commands(undefined, 3)] })), []);
});

test('outgoing churn: socket figures whose last report came a second before the load ended are judged against the requests of their span', () => {
  // Growth goes out once a second: the session-client scenario's 4 s load had its last socket
  // report a second early and read 0.75 connections per request where each request opened one.
  const run = syntheticRun({ seed: 3, durationS: 4, socketWaits: [commands(1, 1)] });
  const [thread] = run.threads;
  const lastSample = thread.samples[thread.samples.length - 1].t;
  thread.growth = thread.growth.filter((g) => g.t <= lastSample - 1000);
  const [f] = outgoingChurn(run);
  assert.ok(f);
  assert.ok(Math.abs((f.evidence.connectionsPerRequest as number) - 1) < 0.08, String(f.evidence.connectionsPerRequest));
});

test('outgoing churn: calls a client library issued with no app frame on their stack are named from the CPU profile (round z)', () => {
  // axios builds the request in the app function that calls it, then issues it from a promise
  // continuation: the agent's call stack holds only axios, the CPU profile charges the axios work
  // done in the caller to it (an HTTP client library's own code is HTTP client work).
  const cwd = '/srv/app';
  const profile = syntheticCpuProfile(
    [
      {
        name: 'fetchPrice',
        file: 'lib/prices.js',
        line: 7,
        share: 0.03,
        callee: { name: 'request', file: 'node_modules/axios/lib/core/Axios.js', share: 0.08 },
      },
      {
        name: 'dispatchHttpRequest',
        file: 'node_modules/axios/lib/adapters/http.js',
        line: 150,
        share: 0.05,
        via: { name: 'processTicksAndRejections', file: 'node:internal/process/task_queues' },
        callee: { name: 'ClientRequest', file: 'node:_http_client', share: 0.06 },
      },
      { name: 'renderPage', file: 'server.js', line: 30, share: 0.1 },
    ],
    { cwd },
  );
  const siteless = { ...call(1, 'http://127.0.0.1:4100'), site: undefined, stack: undefined };
  for (const seed of SEEDS) {
    const [f] = outgoingChurn(syntheticRun({ seed, cwd, outgoing: [siteless], profiles: [profile] }));
    assert.ok(f, `seed ${seed}`);
    assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['fetchPrice', 'lib/prices.js', 7], `seed ${seed}`);
    assert.match(f.summary, /showed no app frame.*fetchPrice \(lib\/prices\.js:7\) is the app function the CPU profile charges/);
  }
  // No profile, or the function already seen making other calls with a site of its own: no culprit guessed.
  assert.equal(outgoingChurn(syntheticRun({ seed: 1, cwd, outgoing: [siteless] }))[0]?.culprit, undefined);
  const elsewhere = { ...call(0), origin: 'http://127.0.0.1:4200', site: { ...fetchPrice, file: '/srv/app/lib/prices.js' }, stack: [] };
  const [g] = outgoingChurn(syntheticRun({ seed: 1, cwd, outgoing: [siteless, elsewhere], profiles: [profile] }));
  assert.equal(g?.culprit, undefined);
});

test('outgoing churn: fetch calls whose sockets undici connects anew (bodies left unread) name the calling code', () => {
  // undici connects from its own dispatcher: the handle hook sees the sockets with no app frame.
  const undiciSockets = (perRequest: number) => ({ api: 'net.connect', resource: 'TCPSocketWrap', perRequest, openShare: 0.05 });
  const fetchCall = call(undefined, 'http://inventory:8080', 'fetch');
  for (const seed of SEEDS) {
    const [f, ...rest] = outgoingChurn(syntheticRun({ seed, outgoing: [fetchCall], handleGrowth: [undiciSockets(1)] }));
    assert.equal(rest.length, 0);
    assert.ok(f, `seed ${seed}`);
    assert.equal(f.category, 'connection-churn');
    assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['fetchPrice', 'pricing.js', 5]);
    assert.equal(f.evidence.api, 'fetch');
    assert.ok((f.evidence.newConnectionShare as number) >= 0.95, String(f.evidence.newConnectionShare));
    assert.match(
      f.summary,
      /fetch calls to http:\/\/inventory:8080 .*went out on a new connection.*body has been read to the end or cancelled/,
    );
    assert.match(f.recommendation, /res\.body\?\.cancel\(\)/);
  }
  // A pool that keeps its connections: a few sockets for every call.
  assert.deepEqual(outgoingChurn(syntheticRun({ seed: 1, outgoing: [fetchCall], handleGrowth: [undiciSockets(0.01)] })), []);
  // Sockets with an app frame are node:http's own (their calls count them), not undici's.
  const owned = { ...undiciSockets(1), site: executor, stack: [executor, fetchPrice, handler] };
  assert.deepEqual(outgoingChurn(syntheticRun({ seed: 1, outgoing: [fetchCall], handleGrowth: [owned] })), []);
  // fetch only half of the client calls: the sockets connected with no app frame are not all its.
  const other = { ...call(0, 'http://users:8080'), site: fetchPrice, stack: [fetchPrice, handler] };
  assert.deepEqual(outgoingChurn(syntheticRun({ seed: 1, outgoing: [fetchCall, other], handleGrowth: [undiciSockets(1)] })), []);
});
