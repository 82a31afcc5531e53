import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listenerLeak } from '../../src/analyze/listener-leak.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

const site = { function: 'attachAfterEvent', file: '/srv/app/util.js', line: 12, column: 5 };

for (const noise of NOISE_LEVELS) {
  test(`listener leak: one 'after' listener per request is critical, culprit the adding site (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({
        seed,
        noise,
        rps: 300,
        latencyMs: (p) => 2 + 60 * p,
        listenerGrowth: [{ emitter: 'Server', event: 'after', perRequest: 1, site, limit: { maxListeners: null, own: false } }],
        maxListenersDisabled: [{ what: 'events.defaultMaxListeners', value: Infinity, site: { ...site, line: 3, function: '' } }],
      });
      const [f] = listenerLeak(run);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.category, 'listener-leak');
      assert.equal(f.severity, 'critical');
      assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['attachAfterEvent', 'util.js', 12]);
      assert.ok(Math.abs((f.evidence.perRequest as number) - 1) < 0.05);
      assert.deepEqual(f.evidence.maxListenersDisabled, [{ what: 'events.defaultMaxListeners', value: Infinity, at: 'util.js:3' }]);
      assert.match(f.summary, /The MaxListenersExceededWarning was silenced \(events\.defaultMaxListeners at util\.js:3\)/);
      assert.ok(f.impact > 0.5, `impact ${f.impact}`);
    }
  });

  test(`listener leak: stays quiet on a stable listener count and on a few listeners added at warm-up (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const stable = syntheticRun({ seed, noise, listenerGrowth: [{ emitter: 'Server', event: 'request', perRequest: 0, base: 2, site }] });
      assert.deepEqual(listenerLeak(stable), []);
      const few = syntheticRun({
        seed,
        noise,
        rps: 2000,
        listenerGrowth: [{ emitter: 'Socket', event: 'close', perRequest: 0.0003, base: 1, site }],
      });
      assert.deepEqual(listenerLeak(few), [], 'fewer than 11 listeners is not a leak');
    }
  });
}

test('listener leak: a site inside node_modules is not blamed as the culprit', () => {
  const run = syntheticRun({
    rps: 300,
    listenerGrowth: [
      {
        emitter: 'Server',
        event: 'after',
        perRequest: 1,
        site: { function: 'use', file: '/srv/app/node_modules/lib/index.js', line: 4, column: 1 },
      },
    ],
  });
  const [f] = listenerLeak(run);
  assert.equal(f.culprit, undefined);
});

test('listener leak: a listener per request on keep-alive sockets is counted over all open connections', () => {
  // 50 open connections (the synthetic run's): each socket gains one listener every 50 requests.
  const run = syntheticRun({ rps: 2000, listenerGrowth: [{ emitter: 'Socket', event: 'close', perRequest: 1 / 50, base: 1, site }] });
  // Additions over all sockets (node's own balanced per-response listener counted too once a socket holds two).
  for (const m of run.threads[0].growth) for (const l of m.listeners) l.added = l.count * 100;
  const [f] = listenerLeak(run);
  assert.ok(f);
  assert.equal(f.severity, 'critical', 'one per request over all sockets, not 0.02');
  assert.ok(Math.abs((f.evidence.perRequestAllSockets as number) - 1) < 0.05, String(f.evidence.perRequestAllSockets));
  assert.equal(f.evidence.openConnections, 50);
  assert.match(f.summary, /on one Socket .*about 1 per request over the 50 open connections/);
});

test('listener leak: a count that only piled up while requests were in flight, and is gone at the end, is no leak', () => {
  const run = () => syntheticRun({ rps: 300, listenerGrowth: [{ emitter: 'Socket', event: 'close', perRequest: 0.05, base: 40, site }] });
  const leaking = run();
  assert.equal(listenerLeak(leaking).length, 1, 'the same growth is a leak while nothing says otherwise');
  const released = run();
  const last = released.threads[0].growth.at(-1)!.listeners[0];
  last.current = 41; // the emitter of the maximum let go of the growth
  assert.deepEqual(listenerLeak(released), []);
  const kept = run();
  const end = kept.threads[0].growth.at(-1)!.listeners[0];
  end.current = end.count;
  const [f] = listenerLeak(kept);
  assert.ok(f, 'all of it still attached: a leak');
  assert.equal(f.evidence.listenersAtEnd, end.count);
});

// Probe p3-fastify-listener: avvio lifts the limit of fastify's own Boot emitter; the app's
// DbClient kept the default of 10 and its warning was printed, yet the finding said "silenced".
const avvio = {
  what: 'Boot.setMaxListeners',
  value: 0,
  site: { function: 'Boot', file: '/srv/app/node_modules/avvio/index.js', line: 64, column: 8 },
};
const dbSite = { function: 'findUser', file: '/srv/app/lib/users-repo.js', line: 8, column: 6 };

test("listener leak: another emitter's lifted limit is not claimed for the leaking one (its limit is the default 10)", () => {
  const run = syntheticRun({
    rps: 300,
    listenerGrowth: [{ emitter: 'DbClient', event: 'reconnect', perRequest: 1, site: dbSite, limit: { maxListeners: 10, own: false } }],
    maxListenersDisabled: [avvio],
  });
  const [f] = listenerLeak(run);
  assert.ok(f);
  assert.doesNotMatch(f.summary, /silenced/);
  assert.equal(f.evidence.maxListenersDisabled, undefined);
  assert.equal(f.evidence.maxListeners, 10);
  assert.doesNotMatch(f.recommendation, /Restore the MaxListenersExceededWarning/);
});

test('listener leak: a limit lifted on the leaking emitter itself is named with the site the agent saw for that emitter', () => {
  const own = { function: 'constructor', file: '/srv/app/lib/db.js', line: 11, column: 10 };
  const run = syntheticRun({
    rps: 300,
    listenerGrowth: [
      { emitter: 'DbClient', event: 'reconnect', perRequest: 1, site: dbSite, limit: { maxListeners: 0, own: true, site: own } },
    ],
    maxListenersDisabled: [avvio, { what: 'DbClient.setMaxListeners', value: 0, site: own }],
  });
  const [f] = listenerLeak(run);
  assert.deepEqual(f.evidence.maxListenersDisabled, [{ what: 'DbClient.setMaxListeners', value: 0, at: 'lib/db.js:11' }]);
  assert.match(f.summary, /was silenced \(DbClient\.setMaxListeners at lib\/db\.js:11\)/);
  assert.match(f.recommendation, /Restore the MaxListenersExceededWarning/);
});

test('listener leak: an own limit lifted where the hook saw no site falls back to the calls on emitters of its class', () => {
  const own = { function: 'constructor', file: '/srv/app/lib/db.js', line: 11, column: 10 };
  const run = syntheticRun({
    rps: 300,
    listenerGrowth: [{ emitter: 'DbClient', event: 'reconnect', perRequest: 1, site: dbSite, limit: { maxListeners: null, own: true } }],
    maxListenersDisabled: [
      avvio,
      { what: 'events.defaultMaxListeners', value: null },
      { what: 'DbClient.setMaxListeners', value: null, site: own },
    ],
  });
  const [f] = listenerLeak(run);
  assert.deepEqual(f.evidence.maxListenersDisabled, [{ what: 'DbClient.setMaxListeners', value: null, at: 'lib/db.js:11' }]);
});

test("listener leak: without the agent's reading of the limit (an older run), only the default and calls on its class may apply, said as a maybe", () => {
  const run = syntheticRun({
    rps: 300,
    listenerGrowth: [{ emitter: 'DbClient', event: 'reconnect', perRequest: 1, site: dbSite }],
    maxListenersDisabled: [avvio],
  });
  const [f] = listenerLeak(run);
  assert.doesNotMatch(f.summary, /silenced/, 'Boot is another class');
  const withDefault = syntheticRun({
    rps: 300,
    listenerGrowth: [{ emitter: 'DbClient', event: 'reconnect', perRequest: 1, site: dbSite }],
    maxListenersDisabled: [avvio, { what: 'events.defaultMaxListeners', value: null, site: { ...dbSite, line: 2 } }],
  });
  const [g] = listenerLeak(withDefault);
  assert.match(g.summary, /may have been silenced \(events\.defaultMaxListeners at lib\/users-repo\.js:2\)/);
});

test('listener leak: once() listeners waiting for an event that never comes get removal advice, not "use once()"', () => {
  const run = syntheticRun({
    rps: 300,
    listenerGrowth: [
      { emitter: 'EventEmitter', event: 'shutdown', perRequest: 1, site, once: true, limit: { maxListeners: 0, own: true } },
    ],
  });
  const [f] = listenerLeak(run);
  assert.match(f.recommendation, /added with `once\(\)`/);
  assert.match(f.recommendation, /signal/);
  assert.doesNotMatch(f.recommendation, /use `emitter\.once\(\)`/);
  const plain = syntheticRun({
    rps: 300,
    listenerGrowth: [{ emitter: 'EventEmitter', event: 'shutdown', perRequest: 1, site, limit: { maxListeners: 0, own: true } }],
  });
  assert.match(listenerLeak(plain)[0].recommendation, /use `emitter\.once\(\)`/);
});
