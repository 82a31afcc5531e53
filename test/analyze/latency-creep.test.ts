import { test } from 'node:test';
import assert from 'node:assert/strict';
import { latencyCreep, uniformSlowdown, type Grower } from '../../src/analyze/latency-creep.js';
import { analyzeRun } from '../../src/analyze/analyze-run.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';
import { syntheticCpuProfile } from '../fixtures/telemetry/synthetic-profile.js';

for (const noise of NOISE_LEVELS) {
  test(`latency creep: latency and CPU per request rising without a profile to tell growth from a slower machine is not growth (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // CPU per request 1 -> 4 ms on one busy core: a handler doing more, or a core giving less; nothing here says which.
      const run = syntheticRun({ seed, noise, rps: (p) => 1000 / (1 + 3 * p), cores: 1, latencyMs: (p) => 2 + 6 * p });
      assert.deepEqual(latencyCreep(run), [], `seed ${seed}`);
    }
  });

  test(`latency creep: flat latency with noise stays quiet (noise ${noise})`, () => {
    for (const seed of SEEDS) assert.deepEqual(latencyCreep(syntheticRun({ seed, noise, latencyMs: 3 })), []);
  });
}

test('latency creep: rising latency with flat CPU per request is growing wait (io-wait)', () => {
  const [f] = latencyCreep(syntheticRun({ rps: 1000, cores: 0.3, elu: 0.3, latencyMs: (p) => 5 + 30 * p }));
  assert.equal(f.category, 'io-wait');
});

test("latency creep: the clients' latency rising while the server's own stays flat is no wait in the app", () => {
  // healthy-http beside a busy machine: the clients' p50 1.4 → 2.7 ms, the server's flat, CPU per request falling.
  const outside = { rps: 8000, cores: 0.4, elu: 0.35, latencyMs: 0.3, clientExtraMs: (p: number) => 1.1 + 1.6 * p };
  for (const seed of SEEDS) assert.deepEqual(latencyCreep(syntheticRun({ ...outside, seed })), [], `seed ${seed}`);
  // The same rise in the clients' figures, half of it in the server's own timing: the app's wait.
  const [f] = latencyCreep(syntheticRun({ ...outside, latencyMs: (p) => 0.3 + 0.9 * p, clientExtraMs: (p) => 1.1 + 0.7 * p }));
  assert.equal(f?.category, 'io-wait', JSON.stringify(f?.evidence));
});

test('latency creep: left to the growth analyzer when listeners explain it', () => {
  const run = syntheticRun({
    rps: 300,
    latencyMs: (p) => 2 + 60 * p,
    listenerGrowth: [
      { emitter: 'Server', event: 'after', perRequest: 1, site: { function: 'a', file: '/srv/app/u.js', line: 1, column: 1 } },
    ],
  });
  // The creep is found, then left out once the listener leak explains it (analyze-run's post-step).
  const codes = analyzeRun(run).flatMap((f) => [
    f.code,
    ...((f.evidence.alsoFound as { code: string }[] | undefined) ?? []).map((a) => a.code),
  ]);
  assert.ok(codes.includes('HOTPATH_LISTENER_LEAK'), codes.join(', '));
  assert.deepEqual(
    codes.filter((c) => c === 'HOTPATH_LATENCY_CREEP'),
    [],
  );
});

test('latency creep: a slowdown spread over every function is not work growth in one of them', () => {
  const trend = (early: number, late: number) => ({ earlyMsPerRequest: early, lateMsPerRequest: late });
  const grower = (early: number, late: number): Grower => ({
    function: 'f',
    file: 'a.js',
    line: 1,
    kind: 'app',
    earlyMsPerRequest: early,
    lateMsPerRequest: late,
    shareOfGrowth: 1,
  });
  // Measured in CI on a shared machine: JSON work 2.29 -> 3.14 ms while the rest went 1.95 -> 3.19 ms.
  assert.equal(uniformSlowdown(trend(4.24, 6.33), grower(2.29, 3.14)), true);
  // A function whose work per request triples while the rest stays put is the culprit.
  assert.equal(uniformSlowdown(trend(3, 7), grower(2, 6)), false);
  // A function that appears only late is growth too.
  assert.equal(uniformSlowdown(trend(3, 5), grower(0, 2)), false);
  // ...when it is app code carrying a real share: Node's internals appearing late are not the app's growth.
  assert.equal(uniformSlowdown(trend(3, 5), { ...grower(0, 2), kind: 'node-core' }), true);
  assert.equal(uniformSlowdown(trend(3, 30), grower(0, 2)), true);
  // A function that holds every sample leaves nothing to calibrate the machine's speed against.
  assert.equal(uniformSlowdown(trend(2, 3), grower(2, 3)), true);
});

/**
 * A machine that slows down (a neighbour on the same cores, a throttled vCPU) raises the CPU every
 * request costs in every function alike; work that grows in one function raises that function's
 * share of the samples. Latency 3 -> 9 ms in both; the profile's samples per request rise 1.7x.
 */
function slowingRun(handlerShareAt: (p: number) => number, restShareAt: (p: number) => number, starved: boolean, noise = 0, seed = 1) {
  const cwd = '/srv/app';
  const cpu = syntheticCpuProfile(
    [
      { name: 'priceQuote', file: 'lib/quote.js', line: 7, share: 0, shareAt: handlerShareAt },
      {
        name: 'parserOnHeadersComplete',
        file: 'node:_http_common',
        line: 80,
        share: 0,
        shareAt: restShareAt,
        via: { name: 'socketOnData', file: 'node:_http_server' },
      },
    ],
    { cwd },
  );
  // Starved: the process's CPU time (the agent's) rises less than the profile's wall-clock samples, as a
  // thread is sampled while it waits for a core. Either way every function's share stays put.
  return syntheticRun({
    seed,
    noise,
    cwd,
    elu: 0.95,
    cores: starved ? (p) => 0.95 / (1 + 0.25 * p) : 0.95,
    rps: (p) => 1000 / (1 + (starved ? 0.9 : 0.7) * p),
    latencyMs: (p) => 3 + 6 * p,
    profiles: [cpu],
  });
}

for (const noise of NOISE_LEVELS) {
  test(`latency creep: CPU per request rising alike in every function (a slowing machine) is no growth (noise ${noise})`, () => {
    for (const seed of SEEDS)
      assert.deepEqual(
        latencyCreep(
          slowingRun(
            () => 0.6,
            () => 0.35,
            true,
            noise,
            seed,
          ),
        ),
        [],
        `seed ${seed}`,
      );
  });

  test(`latency creep: one function's share of the samples growing is growth, and it is named (noise ${noise})`, () => {
    // priceQuote: 0.5 -> 1.2 ms per request while the HTTP parsing stays at 0.5 ms.
    const h = (p: number) => 0.5 + 0.7 * p;
    for (const seed of SEEDS) {
      const [f] = latencyCreep(
        slowingRun(
          (p) => (0.95 * h(p)) / (h(p) + 0.5),
          (p) => (0.95 * 0.5) / (h(p) + 0.5),
          false,
          noise,
          seed,
        ),
      );
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.category, 'handler-growth');
      assert.equal(f.culprit?.function, 'priceQuote');
    }
  });
}

for (const noise of NOISE_LEVELS) {
  test(`latency creep: a machine slowing 30-50 % during the run gets no growth finding; the same rise from one function's work does (noise ${noise})`, () => {
    // CPU per request rises over the run (by 36 % or 52 % from the first third to the last) in every
    // function alike: the profile's shares stay put, latency rises with it. Or it rises as much
    // because priceQuote does more: its share of the samples grows.
    const cwd = '/srv/app';
    const profile = (handler: (p: number) => number, rest: (p: number) => number) =>
      syntheticCpuProfile(
        [
          { name: 'priceQuote', file: 'lib/quote.js', line: 7, share: 0, shareAt: handler },
          {
            name: 'parserOnHeadersComplete',
            file: 'node:_http_common',
            line: 80,
            share: 0,
            shareAt: rest,
            via: { name: 'socketOnData', file: 'node:_http_server' },
          },
        ],
        { cwd },
      );
    for (const seed of SEEDS) {
      for (const rise of [0.6, 0.9]) {
        const run = (cpu: ReturnType<typeof syntheticCpuProfile>) =>
          syntheticRun({
            seed,
            noise,
            cwd,
            elu: 0.95,
            cores: 0.95,
            rps: (p) => 1000 / (1 + rise * p),
            latencyMs: (p) => 3 + 4 * p,
            profiles: [cpu],
          });
        assert.deepEqual(
          latencyCreep(
            run(
              profile(
                () => 0.475,
                () => 0.475,
              ),
            ),
          ),
          [],
          `slowing machine (${rise}), seed ${seed}`,
        );
        if (rise < 0.9) continue;
        // priceQuote 0.5 -> 1.4 ms per request, the HTTP parsing flat at 0.5 ms: 1 -> 1.9 ms in all, as on the slowing machine.
        const h = (p: number) => 0.5 + rise * p;
        const [f] = latencyCreep(
          run(
            profile(
              (p) => (0.95 * h(p)) / (h(p) + 0.5),
              (p) => (0.95 * 0.5) / (h(p) + 0.5),
            ),
          ),
        );
        assert.equal(f?.category, 'handler-growth', `real growth, seed ${seed}`);
        assert.equal(f.culprit?.function, 'priceQuote');
      }
    }
  });
}
