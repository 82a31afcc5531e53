import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ioWait } from '../../src/analyze/io-wait.js';
import { topLevel } from '../../src/analyze/signals/held-slot.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

// A transaction holding a pooled connection across its queries and a call to another service.
const SOURCE = [
  "'use strict';",
  'async function reserveSeat(pool, seat) {',
  '  const conn = await pool.acquire();',
  '  try {',
  "    await conn.query('BEGIN');",
  '    const hold = await holdWithProvider(seat);',
  "    await conn.query('COMMIT');",
  '    return hold;',
  '  } finally { conn.release(); }',
  '}',
].join('\n');

function setup(source = SOURCE): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-held-'));
  mkdirSync(join(dir, 'lib'));
  writeFileSync(join(dir, 'lib', 'seats.js'), source);
  return { dir, file: join(dir, 'lib', 'seats.js') };
}

/** Shares of the time at 0, 1, 2... calls in flight, never above `max`. */
const capped = (max: number): number[] => Array.from({ length: max + 1 }, () => 1 / (max + 1));

function heldRun(file: string, dir: string, o: { levels: number[]; seed?: number; noise?: number }) {
  const reserve = (line: number) => ({ function: 'reserveSeat', file, line, column: 11, functionLine: 2, functionColumn: 1 });
  const query = {
    function: '(anonymous in query)',
    file: join(dir, 'lib/db.js'),
    line: 20,
    column: 5,
    functionLine: 18,
    functionColumn: 3,
  };
  const provider = {
    function: 'holdWithProvider',
    file: join(dir, 'lib/provider.js'),
    line: 8,
    column: 3,
    functionLine: 6,
    functionColumn: 1,
  };
  // 20 requests in flight, 150 req/s: 2 commands of 3 ms and one 16 ms call per request, 4 slots.
  return syntheticRun({
    seed: o.seed,
    noise: o.noise,
    rps: 150,
    elu: 0.15,
    cores: 0.15,
    latencyMs: 130,
    inFlight: 20,
    cwd: dir,
    socketWaits: [{ remote: '127.0.0.1:5432', perRequest: 2, msEach: 3, site: query, stack: [query, reserve(5)], concurrency: o.levels }],
    outgoing: [
      {
        api: 'http',
        origin: 'http://127.0.0.1:9000',
        perRequest: 1,
        msEach: 16,
        site: provider,
        stack: [provider, reserve(6)],
        concurrency: o.levels,
      },
    ],
  });
}

for (const noise of NOISE_LEVELS) {
  test(`io-wait: a slot held across several waits names where requests wait for it, and the pool size (noise ${noise})`, () => {
    const { dir, file } = setup();
    for (const seed of SEEDS) {
      const [f] = ioWait(heldRun(file, dir, { levels: capped(4), seed, noise }));
      assert.equal(f?.category, 'io-wait', `seed ${seed}`);
      assert.match(f.title, /queue for a slot of a limited resource \(about 4 at a time\), not for the I\/O/);
      assert.deepEqual(f.culprit, { function: 'reserveSeat', file: 'lib/seats.js', line: 3, column: 1 });
      assert.equal(f.evidence.poolSize, 4);
      assert.equal((f.evidence.waitsAt as { awaited: string }).awaited, 'pool.acquire()');
      assert.equal((f.evidence.heldAcross as unknown[]).length, 2);
      assert.match(f.summary, /reserveSeat \(lib\/seats\.js:5\) holds its slot across several waits in turn/);
      assert.match(f.summary, /Requests wait for a slot at `await pool\.acquire\(\)` in reserveSeat \(lib\/seats\.js:3\)/);
    }
    rmSync(dir, { recursive: true, force: true });
  });
}

test('io-wait: waits that come and go with the requests (no cap) or with no await before them hold no slot', () => {
  const { dir, file } = setup();
  // The same waits reaching 12 in flight at a time: an arrival process, not a pool.
  const free = ioWait(heldRun(file, dir, { levels: capped(12) }))[0];
  assert.equal(free?.category, 'io-wait');
  assert.equal(free.evidence.poolSize, undefined);
  assert.equal(free.evidence.heldAcross, undefined);
  rmSync(dir, { recursive: true, force: true });
  // Capped, but nothing awaited before the first wait: no place where requests stand in line.
  const bare = setup(SOURCE.replace('  const conn = await pool.acquire();', '  const conn = pool.connection;'));
  const none = ioWait(heldRun(bare.file, bare.dir, { levels: capped(4) }))[0];
  assert.equal(none.evidence.poolSize, undefined);
  rmSync(bare.dir, { recursive: true, force: true });
});

test('io-wait: the top level of a site is the highest it spent 1 % of the window at', () => {
  assert.equal(topLevel([100, 300, 400, 195, 5], 1000), 3);
  assert.equal(topLevel([100, 300, 400, 190, 10], 1000), 4);
  assert.equal(topLevel(undefined, 1000), 0);
  assert.equal(topLevel([1000], 1000), 0);
});
