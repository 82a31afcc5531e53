import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallSite } from '../../src/agent/protocol.js';
import { ioWait } from '../../src/analyze/io-wait.js';
import { minorityWaits } from '../../src/analyze/signals/minority-waits.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

// A route hit by one request in five awaits an upstream call per parcel, six in turn; the other
// routes answer at once (probe round x: p50 0.05 ms, p99 62 ms, 1.3 calls of 8.3 ms per request).
function summaryApp(): { dir: string; getJson: CallSite; orderSummary: CallSite } {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-minority-'));
  writeFileSync(
    join(dir, 'summary.js'),
    [
      'async function orderSummary(port, id) {',
      '  const parcels = [];',
      '  for (let i = 0; i < 6; i++) parcels.push(await getJson(port, `/track/${id}-${i}`));',
      '  return { id, parcels };',
      '}',
    ].join('\n'),
  );
  const getJson = { function: 'getJson', file: join(dir, 'summary.js'), line: 12, column: 10 };
  const orderSummary = { function: 'orderSummary', file: join(dir, 'summary.js'), line: 3, column: 50, functionLine: 1, functionColumn: 1 };
  return { dir, getJson, orderSummary };
}

const quickMost = { rps: 1500, elu: 0.3, cores: 0.3, latencyMs: 0.1, latencyP99Factor: 600, inFlight: 15 };

for (const noise of NOISE_LEVELS) {
  test(`io-wait: waits a minority of requests make one after another are found though the p50 is quick (noise ${noise})`, () => {
    const { dir, getJson, orderSummary } = summaryApp();
    for (const seed of SEEDS) {
      const run = syntheticRun({
        seed,
        noise,
        ...quickMost,
        resources: { TCPSocketWrap: 30 },
        cwd: dir,
        outgoing: [
          { api: 'http', origin: 'http://127.0.0.1:4000', perRequest: 1.3, msEach: 8.3, site: getJson, stack: [getJson, orderSummary] },
        ],
      });
      const [f] = ioWait(run);
      assert.equal(f?.category, 'io-wait', `seed ${seed}`);
      assert.deepEqual(f.culprit, { function: 'orderSummary', file: 'summary.js', line: 3 });
      assert.equal(f.evidence.sequential, true);
      assert.ok((f.evidence.slowMinority as { waitsPerWaitingRequestAtLeast: number }).waitsPerWaitingRequestAtLeast >= 2.5);
      assert.match(f.title, /^The slowest requests spend their time waiting for http:\/\/127\.0\.0\.1:4000/);
      assert.match(f.summary, /Most requests were quick .* made by the slow ones only/);
      assert.match(f.recommendation, /Promise\.all/);
    }
    rmSync(dir, { recursive: true, force: true });
  });
}

test('io-wait: a minority route with one wait, waits started together or short ones is no finding', () => {
  const { dir, getJson, orderSummary } = summaryApp();
  const stack = [getJson, orderSummary];
  const origin = 'http://127.0.0.1:4000';
  // One 20 ms query on 1 request in 5 (a healthy multi-route app): one wait each, nothing in turn.
  const oneQuery = { api: 'http' as const, origin, perRequest: 0.2, msEach: 20, site: getJson, stack };
  assert.deepEqual(ioWait(syntheticRun({ ...quickMost, latencyP99Factor: 250, inFlight: 6.5, cwd: dir, outgoing: [oneQuery] })), []);
  // Three 20 ms calls started together on 1 request in 2: the slowest requests take about one of them.
  const together = { api: 'http' as const, origin, perRequest: 1.5, msEach: 20, site: getJson, stack };
  assert.deepEqual(ioWait(syntheticRun({ ...quickMost, latencyP99Factor: 260, inFlight: 16, cwd: dir, outgoing: [together] })), []);
  // A 1 ms wait per request behind a slow tail: the waits add up to no request time worth a finding.
  const yieldEach = { api: 'http' as const, origin, perRequest: 1, msEach: 1, site: getJson, stack };
  assert.deepEqual(
    ioWait(syntheticRun({ ...quickMost, latencyMs: 0.5, latencyP99Factor: 60, inFlight: 2, cwd: dir, outgoing: [yieldEach] })),
    [],
  );
  rmSync(dir, { recursive: true, force: true });
});

test('io-wait: the minority rule on its own figures', () => {
  const rules = { minPerRequest: 1.5, minSum: 0.7, minLatencyMs: 20, minShare: 0.5 };
  const probe = minorityWaits({ p50Ms: 0.05, p99Ms: 62 }, { perRequest: 1.29, eachMs: 8.3, share: 1 }, rules);
  assert.ok(probe);
  assert.equal(Math.round(probe.perWaitingRequest * 100) / 100, 2.58);
  // The waits explain too little of the requests' time, or the median request made one.
  assert.equal(minorityWaits({ p50Ms: 0.05, p99Ms: 62 }, { perRequest: 1.29, eachMs: 8.3, share: 0.3 }, rules), undefined);
  assert.equal(minorityWaits({ p50Ms: 9, p99Ms: 62 }, { perRequest: 1.29, eachMs: 8.3, share: 1 }, rules), undefined);
  // One call per request whose mean a tail drags above the median request (a single-route app
  // on a busy machine, re-analysed probes: 4.5 ms against 6.9 ms, 6.2 against 7.1).
  assert.equal(minorityWaits({ p50Ms: 4.48, p99Ms: 24.2 }, { perRequest: 1.06, eachMs: 6.9, share: 0.89 }, rules), undefined);
  assert.equal(minorityWaits({ p50Ms: 6.2, p99Ms: 27.4 }, { perRequest: 1.02, eachMs: 7.1, share: 0.64 }, rules), undefined);
  // The slowest requests took less than two waits: the calls ran together.
  assert.equal(minorityWaits({ p50Ms: 0.05, p99Ms: 15 }, { perRequest: 1.29, eachMs: 8.3, share: 1 }, rules), undefined);
});
