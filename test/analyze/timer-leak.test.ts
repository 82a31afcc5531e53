import { test } from 'node:test';
import assert from 'node:assert/strict';
import { timerLeak } from '../../src/analyze/timer-leak.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

const site = { function: 'track', file: '/srv/app/metrics.js', line: 21, column: 3 };

for (const noise of NOISE_LEVELS) {
  test(`timer leak: an interval per request never cleared (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, rps: 500, timerGrowth: [{ kind: 'interval', perRequest: 1, clearedShare: 0, site }] });
      const [f] = timerLeak(run);
      assert.ok(f);
      assert.equal(f.category, 'timer-leak');
      assert.equal(f.severity, 'critical');
      assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['track', 'metrics.js', 21]);
    }
  });

  test(`timer leak: per-request timeouts that are cleared stay quiet (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, rps: 2000, timerGrowth: [{ kind: 'timeout', perRequest: 1, clearedShare: 0.999, site }] });
      assert.deepEqual(timerLeak(run), []);
    }
  });
}

for (const noise of NOISE_LEVELS) {
  test(`timer leak: a 30 min expiry timeout per session is told as a TTL, with sweep advice, critical by its count (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // 2,000 req/s for the run: tens of thousands pending, none fired or cleared.
      const run = syntheticRun({
        seed,
        noise,
        rps: 2000,
        timerGrowth: [{ kind: 'timeout', perRequest: 1, clearedShare: 0, delayMs: 30 * 60_000, site }],
      });
      const [f] = timerLeak(run);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.severity, 'critical');
      assert.equal(f.evidence.meanDelayMs, 1_800_000);
      assert.match(f.summary, /Each asks for 30 min\./);
      assert.match(f.recommendation, /periodic sweep/);
      assert.doesNotMatch(f.recommendation, /finish/);
    }
  });

  test(`timer leak: short per-request timeouts keep the clear-on-finish advice (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({
        seed,
        noise,
        rps: 100,
        timerGrowth: [{ kind: 'timeout', perRequest: 1, clearedShare: 0, delayMs: 20_000, site }],
      });
      const [f] = timerLeak(run);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.severity, 'warning');
      assert.match(f.recommendation, /finish/);
    }
  });
}

const executor = { function: '(anonymous)', file: '/srv/app/lib/jobs.js', line: 3, column: 43 };
const sleep = { function: 'sleep', file: '/srv/app/lib/jobs.js', line: 3, column: 23 };
const pollStatus = { function: 'pollStatus', file: '/srv/app/lib/jobs.js', line: 17, column: 9 };
const createJob = { function: 'createJob', file: '/srv/app/lib/jobs.js', line: 10, column: 3 };

for (const noise of NOISE_LEVELS) {
  test(`timer leak: a loop re-arming a 1 s sleep, started per request, is found though most of its timers fire; the awaiting function is named (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // One loop per request, each re-arming once a second: a fifth or less of the timers pending.
      const run = syntheticRun({
        seed,
        noise,
        rps: 500,
        timerGrowth: [
          {
            kind: 'timeout',
            perRequest: 1,
            clearedShare: 0,
            rearmPerSecond: 1,
            delayMs: 1000,
            awaited: true,
            site: executor,
            stack: [executor, sleep, pollStatus],
          },
        ],
      });
      const [f, ...rest] = timerLeak(run);
      assert.ok(f, `seed ${seed}`);
      assert.deepEqual(rest, []);
      assert.ok(
        Number(f.evidence.pending) / Number(f.evidence.created) < 0.5,
        `${String(f.evidence.pending)} of ${String(f.evidence.created)}`,
      );
      assert.equal(f.evidence.rearmed, true);
      assert.equal(f.severity, 'warning');
      assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['pollStatus', 'lib/jobs.js', 17]);
      assert.deepEqual((f.evidence.through as { function: string }).function, 'sleep');
      assert.match(f.summary, /Awaited by `pollStatus` at lib\/jobs\.js:17 through `sleep`/);
      assert.match(f.recommendation, /exit/);
      // 10,000 loops: as many closures held.
      const [big] = timerLeak(
        syntheticRun({
          seed,
          noise,
          rps: 2000,
          timerGrowth: [{ kind: 'timeout', perRequest: 1, clearedShare: 0, rearmPerSecond: 1, site: pollStatus, promise: true }],
        }),
      );
      assert.equal(big?.severity, 'critical');
      assert.equal(big.culprit?.function, 'pollStatus');
      assert.match(big.title, /^timers\/promises setTimeout loops/);
    }
  });

  test(`timer leak: per-request timeouts that fire after a few seconds, never cleared, level off and stay quiet (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // 2,000 req/s, each with a 4.5 s timeout that runs out: about 9,000 pending from 4.5 s on, under half of those
      // created by the end, the count rising steadily (r > 0.8) until it levels off.
      const run = syntheticRun({
        seed,
        noise,
        rps: 2000,
        timerGrowth: [{ kind: 'timeout', perRequest: 1, clearedShare: 0, firesAfterMs: 4500, delayMs: 4500, site }],
      });
      assert.deepEqual(timerLeak(run), []);
    }
  });

  test(`timer leak: a loop re-arming per request in flight only (a wait per request) stays quiet (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // 500 loops pending at most while 300 requests are in flight: the requests' own waits.
      const run = syntheticRun({
        seed,
        noise,
        rps: 50,
        inFlight: 300,
        timerGrowth: [
          {
            kind: 'timeout',
            perRequest: 1,
            clearedShare: 0,
            rearmPerSecond: 5,
            awaited: true,
            site: executor,
            stack: [executor, sleep, pollStatus],
          },
        ],
      });
      assert.deepEqual(timerLeak(run), []);
    }
  });
}

test('timer leak: timeouts that piled up only because the loop lagged behind them drain once the load is over; leaked ones do not', () => {
  // One timeout per request, a fifth of them fired by the end of the load (the loop lagging), the
  // count climbing with the requests: a leak by every rule, until the report after the load.
  const lagging = syntheticRun({
    seed: 1,
    rps: 1000,
    timerGrowth: [{ kind: 'timeout', perRequest: 1, clearedShare: 0, firedShare: 0.2, delayMs: 500, site }],
  });
  assert.equal(timerLeak(lagging).length, 1, 'during the load it reads as a leak');
  const after = (run: typeof lagging, pendingShare: number) => {
    const thread = run.threads[0];
    const last = thread.growth.at(-1)!;
    const w = run.loadWindow!;
    const timers = last.timers.map((tm) => {
      const pending = Math.round(tm.pending * pendingShare);
      return { ...tm, pending, fired: tm.created - tm.cleared - pending };
    });
    thread.growth.push({ ...last, t: w.end + 500, timers });
    return run;
  };
  assert.deepEqual(timerLeak(after(lagging, 0.3)), [], 'drained to 30 % of its peak half a second later: late, not leaked');
  // The re-arm loops of a leak go on after the load: still found.
  const rearm = syntheticRun({
    seed: 1,
    rps: 500,
    timerGrowth: [
      {
        kind: 'timeout',
        perRequest: 1,
        clearedShare: 0,
        rearmPerSecond: 1,
        delayMs: 1000,
        awaited: true,
        site: executor,
        stack: [executor, sleep, pollStatus],
      },
    ],
  });
  assert.equal(timerLeak(after(rearm, 1))[0]?.culprit?.function, 'pollStatus');
});

test("timer leak: a library's timers, awaited or its own, are the app caller's (the library named as the way through); none without an app frame", () => {
  const lib = { function: 'delay', file: '/srv/app/node_modules/delay/index.js', line: 5, column: 3 };
  const awaited = syntheticRun({
    rps: 1000,
    timerGrowth: [
      { kind: 'timeout', perRequest: 1, clearedShare: 0, rearmPerSecond: 1, awaited: true, site: lib, stack: [lib, pollStatus, createJob] },
    ],
  });
  assert.equal(timerLeak(awaited)[0]?.culprit?.function, 'pollStatus');
  const own = syntheticRun({
    rps: 1000,
    timerGrowth: [{ kind: 'interval', perRequest: 1, clearedShare: 0, site: lib, stack: [lib, pollStatus] }],
  });
  const [f] = timerLeak(own);
  assert.equal(f?.culprit?.function, 'pollStatus');
  assert.equal((f.evidence.through as { function: string }).function, 'delay');
  assert.match(f.summary, /Created by `pollStatus` .* through `delay` \(node_modules\/delay\/index\.js:5, a dependency\)/);
  // A cache keeping a TTL timer per entry (lru-cache's ttlAutopurge), set once per request.
  const lru = { function: 'setItemTTL', file: '/srv/app/node_modules/lru-cache/index.js', line: 323, column: 19 };
  const set = { function: 'set', file: '/srv/app/node_modules/lru-cache/index.js', line: 700, column: 12 };
  const remember = { function: 'rememberNonce', file: '/srv/app/lib/nonce.js', line: 9, column: 8 };
  const cache = syntheticRun({
    rps: 1000,
    timerGrowth: [
      { kind: 'timeout', perRequest: 1, clearedShare: 0, delayMs: 600_000, site: lru, stack: [lru, set, remember, pollStatus] },
    ],
  });
  assert.equal(timerLeak(cache)[0]?.culprit?.function, 'rememberNonce');
  // Only the library's frames: nobody to name.
  const bare = syntheticRun({ rps: 1000, timerGrowth: [{ kind: 'interval', perRequest: 1, clearedShare: 0, site: lib, stack: [lib] }] });
  const [g] = timerLeak(bare);
  assert.ok(g);
  assert.equal(g.culprit, undefined);
});

test('timer leak: a re-arm loop per request is found when the machine slowed in the second half of the run (its rise judged per request, not per second)', () => {
  for (const seed of SEEDS) {
    // 3,000 req/s, then a fifth of that once other processes took the cores: the loops' count rose
    // a fifth as fast in the second half of the window, with every request as before.
    const run = syntheticRun({
      seed,
      rps: (p) => (p < 0.5 ? 3000 : 600),
      timerGrowth: [
        {
          kind: 'timeout',
          perRequest: 1,
          clearedShare: 0,
          rearmPerSecond: 2,
          delayMs: 500,
          site: { ...pollStatus, function: 'retryDelivery' },
        },
      ],
    });
    const [f] = timerLeak(run);
    assert.equal(f?.evidence.rearmed, true, `seed ${seed}`);
    assert.equal(f.culprit?.function, 'retryDelivery');
  }
});
