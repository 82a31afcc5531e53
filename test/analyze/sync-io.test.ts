import { test } from 'node:test';
import assert from 'node:assert/strict';
import { syncIo } from '../../src/analyze/sync-io.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { syntheticCpuProfile } from '../fixtures/telemetry/synthetic-profile.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

const site = { function: 'login', file: '/srv/app/app.js', line: 14, column: 20 };

for (const noise of NOISE_LEVELS) {
  test(`sync-io: pbkdf2Sync on every request is critical with the calling handler (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({
        seed,
        noise,
        rps: 100,
        elu: 0.99,
        syncCalls: [{ api: 'crypto.pbkdf2Sync', perRequest: 1, msEach: 9, site }],
      });
      const [f] = syncIo(run);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.category, 'sync-io');
      assert.equal(f.severity, 'critical');
      assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['login', 'app.js', 14]);
      assert.ok((f.evidence.shareOfWindow as number) > 0.5);
      assert.match(f.recommendation, /pbkdf2/);
    }
  });

  test(`sync-io: a rare tiny readFileSync is not reported (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, rps: 2000, syncCalls: [{ api: 'fs.readFileSync', perRequest: 0.001, msEach: 0.05, site }] });
      assert.deepEqual(syncIo(run), []);
    }
  });
}

test('sync-io: calls made before the load window do not count', () => {
  const run = syntheticRun({ rps: 1000, syncCalls: [{ api: 'fs.readFileSync', perRequest: 0, msEach: 1, site }] });
  // Simulate 500 ms of sync reads at startup: present in every cumulative report, before and after.
  for (const m of run.threads[0].growth) m.syncCalls = [{ api: 'fs.readFileSync', count: 100, totalMs: 500, site }];
  run.threads[0].growth.unshift({ ...run.threads[0].growth[0], t: run.loadWindow!.start - 10 });
  assert.deepEqual(syncIo(run), []);
});

test('sync-io: console.log to a file is named as writes to stdout, timed in µs, with logging advice', () => {
  const log = { function: 'logRequest', file: '/srv/app/lib/log.js', line: 4, column: 11 };
  const run = syntheticRun({
    seed: 3,
    rps: 15_000,
    syncCalls: [{ api: 'fs.writeSync (stdout)', perRequest: 1, msEach: 0.003, site: log }],
  });
  const [f] = syncIo(run);
  assert.ok(f);
  assert.equal(f.title, 'Synchronous writes to stdout block the event loop on the request path');
  assert.match(f.summary, /, 3 µs per call: /);
  assert.match(f.recommendation, /console\.log/);
  assert.doesNotMatch(f.recommendation, /fs\.promises/);
  assert.deepEqual([f.culprit?.function, f.culprit?.file], ['logRequest', 'lib/log.js']);
});

test('sync-io: writes a logger library makes synchronously name the app function that logged, through the library, with logger advice', () => {
  const boom = { function: 'actualWrite', file: '/srv/app/node_modules/sonic-boom/index.js', line: 645, column: 18 };
  const pinoWrite = { function: 'write', file: '/srv/app/node_modules/pino/lib/proto.js', line: 214, column: 10 };
  const submit = { function: 'submitOrder', file: '/srv/app/lib/orders.js', line: 10, column: 7 };
  const run = syntheticRun({
    rps: 400,
    elu: 0.9,
    syncCalls: [{ api: 'fs.writeSync', perRequest: 1, msEach: 0.4, site: boom, stack: [boom, pinoWrite, submit] }],
  });
  const [f] = syncIo(run);
  assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['submitOrder', 'lib/orders.js', 10]);
  assert.equal(f.evidence.via, 'sonic-boom');
  assert.match(f.summary, /called from `submitOrder` at lib\/orders\.js:10 through sonic-boom/);
  assert.match(f.recommendation, /logger writing synchronously/);
  assert.doesNotMatch(f.recommendation, /fs\.promises/);
});

test('sync-io: file reads made by require() on an app line are a module reloaded per request, with its advice; a plain read is not', async () => {
  const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-sync-require-'));
  try {
    mkdirSync(join(dir, 'lib'));
    writeFileSync(
      join(dir, 'lib', 'plans.js'),
      [
        "'use strict';",
        'function loadPlans() {',
        '  delete require.cache[require.resolve(PLANS)];',
        '  return require(PLANS);',
        '}',
        'function readPrices() {',
        "  return JSON.parse(fs.readFileSync(PRICES, 'utf8'));",
        '}',
      ].join('\n'),
    );
    const reloadSite = { function: 'loadPlans', file: join(dir, 'lib', 'plans.js'), line: 4, column: 10 };
    const [f] = syncIo(
      syntheticRun({
        cwd: dir,
        rps: 900,
        elu: 0.99,
        syncCalls: [{ api: 'fs.readFileSync', perRequest: 1, msEach: 0.3, site: reloadSite }],
      }),
    );
    assert.equal(f.evidence.reloadsModule, true);
    assert.equal(f.title, 'require() reloads a module on the request path, blocking the event loop');
    assert.match(f.summary, /The reads are `require\(\)`'s/);
    assert.match(f.recommendation, /require\.cache/);
    assert.doesNotMatch(f.recommendation, /Use `fs\.promises`/);
    const readSite = { ...reloadSite, function: 'readPrices', line: 7 };
    const [g] = syncIo(
      syntheticRun({ cwd: dir, rps: 900, elu: 0.99, syncCalls: [{ api: 'fs.readFileSync', perRequest: 1, msEach: 0.3, site: readSite }] }),
    );
    assert.equal(g.evidence.reloadsModule, undefined);
    assert.match(g.recommendation, /fs\.promises/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sync-io: the floor is a share of the loop busy time, not of the window: a starved target whose writes were 1.7 % of the window is found', () => {
  const log = { function: 'logRequest', file: '/srv/app/lib/log.js', line: 4, column: 11 };
  // Beside a CPU hog: 1,100 req/s, 15 µs of blocking write each (1.7 % of the window), the loop busy 22 %.
  const starved = syntheticRun({
    seed: 2,
    rps: 1100,
    elu: 0.22,
    syncCalls: [{ api: 'fs.writeSync (stdout)', perRequest: 1, msEach: 0.015, site: log }],
  });
  const [f] = syncIo(starved);
  assert.ok(f);
  assert.ok((f.evidence.shareOfWindow as number) < 0.02, String(f.evidence.shareOfWindow));
  assert.ok((f.evidence.shareOfLoopBusy as number) > 0.06, String(f.evidence.shareOfLoopBusy));
  assert.match(f.summary, /% of its busy time\)/);
  // The same writes on a loop busy 95 % of the time are under 2 % of its work: not reported.
  const fed = syntheticRun({
    seed: 2,
    rps: 1100,
    elu: 0.95,
    syncCalls: [{ api: 'fs.writeSync (stdout)', perRequest: 1, msEach: 0.015, site: log }],
  });
  assert.deepEqual(syncIo(fed), []);
});

test('sync-io: ranked by the work the profile saw around the calls under the caller, when more than the calls timed', () => {
  // A stdout logger: each writeSync timed at 2.4 µs, 6 % of the window, while the profile puts a
  // third of the CPU in node:fs code (the synchronous stream around each write) under the logger.
  const cwd = '/srv/app';
  const logger = { function: 'logRequest', file: '/srv/app/lib/log.js', line: 4, column: 11 };
  const cpu = syntheticCpuProfile(
    [
      { name: 'logRequest', file: 'lib/log.js', line: 3, share: 0.05, callee: { name: 'writeSync', file: 'node:fs', share: 0.33 } },
      { name: 'getOrder', file: 'server.js', line: 12, share: 0.3 },
    ],
    { cwd },
  );
  const calls = [{ api: 'fs.writeSync', perRequest: 1, msEach: 0.0024, site: logger }];
  const timed = syncIo(syntheticRun({ seed: 1, cwd, rps: 25000, elu: 0.9, syncCalls: calls }))[0];
  const profiled = syncIo(syntheticRun({ seed: 1, cwd, rps: 25000, elu: 0.9, syncCalls: calls, profiles: [cpu] }))[0];
  assert.ok(timed && profiled);
  assert.ok(timed.impact < 0.1, String(timed.impact));
  assert.ok((profiled.evidence.profiledCpuShare as number) > 0.3, String(profiled.evidence.profiledCpuShare));
  assert.ok(profiled.impact > 0.25, String(profiled.impact));
  // Severity stays the timed calls' (a share of the window the loop spent in them).
  assert.equal(profiled.severity, timed.severity);
});
