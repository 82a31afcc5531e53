import { test } from 'node:test';
import assert from 'node:assert/strict';
import { handleLeak, HANDLE_LEAK_MIN_GROWTH } from '../../src/analyze/handle-leak.js';
import { syntheticRun, type SyntheticOptions } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';
import { seededRandom, jitter } from '../fixtures/telemetry/seeded-random.js';

const getConfig = { function: 'getConfig', file: '/srv/app/lib/config.js', line: 11, column: 3 };
const sendMetric = { function: 'sendMetric', file: '/srv/app/lib/metrics.js', line: 10, column: 16 };
const statsClient = { function: 'Client.connect', file: '/srv/app/node_modules/stats/index.js', line: 40, column: 5 };

/**
 * A count that follows the run's progress (about the requests served), wobbling by up to
 * noise × 10 % per sample; above 2,000 it is read once a second and repeated in between, as the
 * agent's sampler does with a long resource listing.
 */
function growing(seed: number, noise: number, type: string, to: number, from = 0): (p: number) => Record<string, number> {
  const rand = seededRandom(seed * 7 + 1);
  return (p) => {
    const exact = from + (to - from) * p;
    const read = exact > 2_000 ? from + ((to - from) * Math.floor(p * 10)) / 10 : exact;
    return { [type]: Math.max(0, Math.round(jitter(rand, read, noise * 0.1))) };
  };
}

function run(o: SyntheticOptions) {
  return syntheticRun({ rps: 2000, ...o });
}

for (const noise of NOISE_LEVELS) {
  test(`handle leak: an fs.watch watcher per request, never closed, names the watching function (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // 2,000 req/s for 10 s: about 18,000 watchers.
      const r = run({
        seed,
        noise,
        resourcesAt: growing(seed, noise, 'FSEventWrap', 18_000),
        resourcesAfterLoad: { FSEventWrap: 18_000 },
        handleGrowth: [{ api: 'fs.watch', resource: 'FSEventWrap', perRequest: 0.9, site: getConfig }],
      });
      const [f, ...rest] = handleLeak(r);
      assert.ok(f, `seed ${seed}`);
      assert.deepEqual(rest, []);
      assert.equal(f.code, 'HOTPATH_HANDLE_LEAK');
      assert.equal(f.category, 'memory-leak');
      assert.equal(f.severity, 'critical');
      assert.equal(f.evidence.resource, 'FSEventWrap');
      assert.equal(f.evidence.api, 'fs.watch');
      assert.ok(Number(f.evidence.perRequest) > 0.6 && Number(f.evidence.perRequest) < 1.2, String(f.evidence.perRequest));
      assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['getConfig', 'lib/config.js', 11]);
      assert.match(f.title, /^fs\.watch watchers pile up/);
      assert.match(f.recommendation, /once, at startup/);
    }
  });

  test(`handle leak: outgoing TCP sockets per request are counted without the server's own connections; a library's call is charged to the app caller (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const r = run({
        seed,
        noise,
        // 50 inbound connections (the base) plus the leak.
        resourcesAt: (p) => ({ TCPSocketWrap: 50 + growing(seed, noise, 'x', 15_000)(p).x }),
        handleGrowth: [
          { api: 'net.connect', resource: 'TCPSocketWrap', perRequest: 0.75, site: statsClient, stack: [statsClient, sendMetric] },
        ],
      });
      const [f] = handleLeak(r);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.evidence.resource, 'TCPSocketWrap');
      assert.ok(Number(f.evidence.countAtStart) < 2_000, `inbound left out: ${String(f.evidence.countAtStart)}`);
      assert.equal(f.severity, 'critical');
      assert.equal(f.culprit?.function, 'sendMetric');
      assert.match(f.recommendation, /EMFILE/);
    }
  });

  test(`handle leak: inbound connections that grow with the load stay quiet (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // An open-model run whose clients keep opening connections: the server's own sockets.
      const r = run({ seed, noise, openConnections: (p) => 50 + 5_000 * p });
      assert.deepEqual(handleLeak(r), []);
    }
  });

  test(`handle leak: a pool that fills up early, handles held by requests in flight, and handles released after the load stay quiet (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // 400 pooled connections opened one by one over the first 60 % of the run (steady: r > 0.8), then reused.
      const pool = run({ seed, noise, resourcesAt: (p) => ({ TCPSocketWrap: 50 + Math.round(400 * Math.min(1, p / 0.6)) }) });
      assert.deepEqual(handleLeak(pool), [], `pool, seed ${seed}`);
      // A backlog: every request in flight holds an outgoing socket, and requests pile up.
      const backlog = run({
        seed,
        noise,
        inFlight: (p) => 50 + 3_000 * p,
        resourcesAt: (p) => ({ TCPSocketWrap: 50 + Math.round(3_000 * p) }),
      });
      assert.deepEqual(handleLeak(backlog), [], `backlog, seed ${seed}`);
      // Watchers that pile up during the load but are all closed once it is over.
      const released = run({ seed, noise, resourcesAt: growing(seed, noise, 'FSEventWrap', 5_000), resourcesAfterLoad: {} });
      assert.deepEqual(handleLeak(released), [], `released, seed ${seed}`);
      // Requests in flight (DNS lookups queued behind the thread pool) are no handles.
      const lookups = run({ seed, noise, resourcesAt: growing(seed, noise, 'GetAddrInfoReqWrap', 5_000) });
      assert.deepEqual(handleLeak(lookups), [], `lookups, seed ${seed}`);
    }
  });

  test(`handle leak: a one-off batch of handles opened at once is no steady growth (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // 1,000 watchers opened together 70 % into the run (a reload), none before or after.
      const r = run({ seed, noise, resourcesAt: (p) => ({ FSEventWrap: p < 0.7 ? 0 : 1_000 }) });
      assert.deepEqual(handleLeak(r), []);
    }
  });

  test(`handle leak: a small steady growth below ${HANDLE_LEAK_MIN_GROWTH} handles stays quiet (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // Few requests in flight, so the growth is not measured against them.
      const r = run({ seed, noise, inFlight: 5, resourcesAt: (p) => ({ FSEventWrap: Math.round(60 * p) }) });
      assert.deepEqual(handleLeak(r), []);
    }
  });

  test(`handle leak: Timeout growth is timer-leak's when the timer hook saw the timers, a handle leak when it did not (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const timers = growing(seed, noise, 'Timeout', 16_000);
      const seen = run({
        seed,
        noise,
        resourcesAt: timers,
        timerGrowth: [{ kind: 'timeout', perRequest: 0.8, clearedShare: 0, delayMs: 60_000 }],
      });
      assert.deepEqual(handleLeak(seen), [], `seen, seed ${seed}`);
      const [unseen] = handleLeak(run({ seed, noise, resourcesAt: timers }));
      assert.ok(unseen, `unseen, seed ${seed}`);
      assert.equal(unseen.evidence.resource, 'Timeout');
      assert.equal(unseen.culprit, undefined);
      assert.match(unseen.recommendation, /timer hook did not see/);
    }
  });

  test(`handle leak: unref'd watchers the active resources do not list are found through the hook (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const r = run({
        seed,
        noise,
        handleGrowth: [{ api: 'fs.watch', resource: 'FSEventWrap', perRequest: 0.9, unrefShare: 1, site: getConfig }],
      });
      const [f] = handleLeak(r);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.evidence.seenBy, 'hook');
      assert.equal(f.evidence.unref, f.evidence.open);
      assert.equal(f.culprit?.function, 'getConfig');
      assert.match(f.summary, /unref'd/);
      assert.match(f.recommendation, /unref'd/);
    }
  });
}

test('handle leak: a handle opened with the clock, not the requests, is a warning until it nears the descriptor limit', () => {
  for (const seed of SEEDS) {
    // 30 a second whatever the traffic: 300 in 10 s, well under 0.1 per request at 2,000 req/s.
    const slow = run({ seed, noise: 0.1, resourcesAt: (p) => ({ UDPWrap: Math.round(300 * p) }) });
    const [f] = handleLeak(slow);
    assert.ok(f, `seed ${seed}`);
    assert.equal(f.severity, 'warning');
    assert.match(f.title, /^UDP sockets/);
    // The same rate for 2 minutes of sockets: over 1,000 descriptors.
    const [g] = handleLeak(run({ seed, noise: 0.1, resourcesAt: (p) => ({ UDPWrap: 200 + Math.round(1_000 * p) }) }));
    assert.equal(g?.severity, 'critical');
  }
});

test('handle leak: sockets opened per request are found when the machine slowed in the second half of the run (the rise judged per request, not per second)', () => {
  // 3,000 req/s, then a fifth of that: the sockets rose a sixth of their total after the window's
  // midpoint in time, though every tenth request opened one all along.
  const rps = (p: number) => (p < 0.5 ? 3000 : 600);
  const served = (p: number) => (p < 0.5 ? 3000 * p : 1500 + 600 * (p - 0.5));
  for (const seed of SEEDS) {
    const r = run({
      seed,
      rps,
      resourcesAt: (p) => ({ UDPWrap: Math.round(10 * 0.1 * served(p)) }),
      handleGrowth: [{ api: 'dgram.createSocket', resource: 'UDPWrap', perRequest: 0.1, site: sendMetric }],
    });
    const [f] = handleLeak(r);
    assert.ok(f, `seed ${seed}`);
    assert.equal(f.evidence.resource, 'UDPWrap');
    assert.equal(f.culprit?.function, 'sendMetric');
  }
});

test('handle leak: when the agent could not open a file for want of descriptors, the finding says the limit was reached and is critical', () => {
  const r = run({ seed: 1, noise: 0.1, resourcesAt: (p) => ({ UDPWrap: Math.round(300 * p) }) });
  const [calm] = handleLeak(r);
  assert.equal(calm?.severity, 'warning');
  assert.equal(calm.evidence.outOfFileDescriptors, undefined);
  r.threads[0].agentErrors.push({
    type: 'agent-error',
    what: 'rss',
    message: 'EMFILE: too many open files, uv_resident_set_memory',
  } as never);
  const [f] = handleLeak(r);
  assert.equal(f?.severity, 'critical');
  assert.equal(f.evidence.outOfFileDescriptors, true);
  assert.match(f.summary, /ran out of file descriptors/);
});
