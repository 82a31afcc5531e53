import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterPrimary, DISTRIBUTION_PATH, PRIMARY_MIN_CORE_SHARE, PRIMARY_MIN_HANDOFFS } from '../../src/analyze/cluster-primary.js';
import { analyzeRun } from '../../src/analyze/analyze-run.js';
import { workerSpread } from '../../src/analyze/signals/worker-spread.js';
import { fitLine } from '../../src/analyze/signals/cluster-primary-load.js';
import { targetThreads } from '../../src/analyze/signals/load-window.js';
import { summarizeTelemetry } from '../../src/report/telemetry-summary.js';
import { varySchedCommand } from '../../src/analyze/cluster-primary.advice.js';
import { syntheticCluster } from '../fixtures/telemetry/synthetic-cluster.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

for (const noise of NOISE_LEVELS) {
  test(`cluster primary: its cost per connection, share of a core and headroom, from its own stream (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      // 2,000 connections/s at 150 µs each: 30 % of a core, saturated at ~6,700/s (3.3x: a warning).
      const run = syntheticCluster({ seed, noise, connectionsPerS: 2000, cpuPerConnectionUs: 150 });
      const [f, ...rest] = clusterPrimary(run);
      assert.equal(rest.length, 0);
      assert.equal(f.code, 'HOTPATH_CLUSTER_PRIMARY');
      assert.equal(f.category, 'connection-churn');
      assert.equal(f.evidence.role, 'cluster-primary');
      const perConn = f.evidence.cpuPerConnectionUs as number;
      // The idle share (0.2 % of a core) adds 1 µs per connection; the agent's own time is left out.
      assert.ok(perConn > 150 * (1 - noise) && perConn < 155 * (1 + noise), `cpuPerConnectionUs ${perConn}`);
      assert.ok(Math.abs((f.evidence.coreShare as number) - 0.3) < 0.3 * noise + 0.02, `coreShare ${f.evidence.coreShare}`);
      const headroom = f.evidence.headroom as number;
      assert.ok(Math.abs(headroom - 1e6 / perConn / (f.evidence.connectionsPerSecond as number)) < 0.01);
      assert.equal(f.severity, headroom < 2 ? 'critical' : headroom < 4 ? 'warning' : 'info');
      assert.deepEqual(f.culprit, DISTRIBUTION_PATH);
      assert.equal(f.evidence.forkSite, 'server.js:11');
      assert.match(f.summary, /round_robin_handle/);
      assert.match(f.summary, /forked at server\.js:11/);
      assert.match(f.title, new RegExp(`${Math.round(perConn)} µs of CPU per connection`));
      assert.deepEqual(Object.keys(f.evidence.requestsPerWorker as object), ['1', '2']);
    }
  });
}

test('cluster primary: the headroom picks the verdict: falls over before 2x, close, fine at this load', () => {
  const critical = clusterPrimary(syntheticCluster({ connectionsPerS: 3000, cpuPerConnectionUs: 250, noise: 0 }))[0];
  assert.equal(critical.severity, 'critical');
  assert.match(critical.evidence.verdict as string, /^falls over before 1\.3x this rate/);
  const close = clusterPrimary(syntheticCluster({ connectionsPerS: 2000, cpuPerConnectionUs: 150, noise: 0 }))[0];
  assert.equal(close.severity, 'warning');
  assert.match(close.summary, /saturates a core at about 6600 connections\/s: close: it falls over at about 3\.3x this rate/);
  const fine = clusterPrimary(syntheticCluster({ connectionsPerS: 1000, cpuPerConnectionUs: 80, noise: 0 }))[0];
  assert.equal(fine.severity, 'info');
  assert.match(fine.evidence.verdict as string, /^fine at this load \(about 12\.\dx this rate/);
});

test('cluster primary: how its CPU, loop and held sockets followed a rising connection rate', () => {
  for (const seed of SEEDS) {
    const run = syntheticCluster({ seed, noise: 0.1, connectionsPerS: (p) => 500 + 2500 * p, cpuPerConnectionUs: 120, heldPer1000: 20 });
    const [f] = clusterPrimary(run);
    const s = f.evidence.scaling as Record<string, { per1000PerS: number; r: number } | number>;
    assert.equal(s.points, 10);
    const share = s.coreShare as { per1000PerS: number; r: number };
    // 120 µs per connection: 12 % of a core more per 1,000 connections/s.
    assert.ok(Math.abs(share.per1000PerS - 0.12) < 0.02, JSON.stringify(share));
    assert.ok(share.r > 0.95);
    const held = s.heldSockets as { per1000PerS: number; r: number };
    assert.ok(Math.abs(held.per1000PerS - 20) < 4 && held.r > 0.9, JSON.stringify(held));
    assert.ok((s.elu as { r: number }).r > 0.9);
  }
});

test('cluster primary: a steady rate says the cost per connection assumes proportional growth', () => {
  const [f] = clusterPrimary(syntheticCluster({ noise: 0, connectionsPerS: 2000 }));
  const s = f.evidence.scaling as Record<string, unknown>;
  assert.match(s.note as string, /hardly varied/);
  assert.equal(s.coreShare, undefined);
});

test('cluster primary: keep-alive (few hand-offs) or SCHED_NONE (none) gets no finding', () => {
  for (const seed of SEEDS) {
    // Keep-alive: the connections are handed off once at the start, then reused.
    const keepAlive = syntheticCluster({ seed, connectionsPerS: (p) => (p < 0.02 ? 1000 : 0), cpuPerConnectionUs: 150 });
    assert.deepEqual(clusterPrimary(keepAlive), []);
    const none = syntheticCluster({ seed, connectionsPerS: 0, schedulingPolicy: 1 });
    assert.deepEqual(clusterPrimary(none), []);
  }
});

test('cluster primary: thresholds: too few hand-offs, or too small a share of a core', () => {
  // 10 s at 10/s: 100 hand-offs.
  assert.ok(10 * 10 < PRIMARY_MIN_HANDOFFS);
  assert.deepEqual(clusterPrimary(syntheticCluster({ noise: 0, connectionsPerS: 10, cpuPerConnectionUs: 10_000 })), []);
  // 1,000/s at 15 µs: 1.5 % of a core.
  assert.ok(0.015 < PRIMARY_MIN_CORE_SHARE);
  assert.deepEqual(clusterPrimary(syntheticCluster({ noise: 0, connectionsPerS: 1000, cpuPerConnectionUs: 15, idleCoreShare: 0 })), []);
});

test('cluster primary: a single-process app never gets the finding, however it churns', () => {
  for (const seed of SEEDS) {
    const run = syntheticRun({ seed, connectionsPerRequest: 1, clientKeepalive: false, rps: 8000 });
    assert.deepEqual(clusterPrimary(run), []);
    assert.ok(!analyzeRun(run).some((f) => f.code === 'HOTPATH_CLUSTER_PRIMARY'));
    assert.equal(summarizeTelemetry(run)?.cluster, undefined);
  }
});

test("cluster primary: the primary is never a target of the workers' analyses", () => {
  const run = syntheticCluster({ connectionsPerS: 3000, cpuPerConnectionUs: 250 });
  assert.deepEqual(
    targetThreads(run)
      .map((t) => t.pid)
      .sort(),
    [4001, 4002],
  );
  const summary = summarizeTelemetry(run)!;
  assert.deepEqual(summary.targets.map((t) => t.pid).sort(), [4001, 4002]);
  // The primary's CPU is not in the workers' figures, only in its own.
  assert.equal(summary.cluster?.primary?.pid, 4000);
  assert.ok(analyzeRun(run).some((f) => f.code === 'HOTPATH_CLUSTER_PRIMARY'));
});

test('cluster primary: the advice in order: keep-alive, fewer connections, SCHED_NONE with its cost, one process per port / reusePort', () => {
  const [f] = clusterPrimary(syntheticCluster());
  const r = f.recommendation;
  const order = ['Keep-alive from the proxy', 'Fewer new connections per second', 'cluster.SCHED_NONE', 'One process per port'].map((s) =>
    r.indexOf(s),
  );
  assert.ok(
    order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1])),
    r,
  );
  assert.match(r, /NODE_CLUSTER_SCHED_POLICY=none/);
  assert.match(r, /uneven/);
  assert.match(r, /reusePort/);
  // The experiment, with the run's own command.
  assert.ok(r.includes("`hotpath run --no-keepalive --vary 'NODE_CLUSTER_SCHED_POLICY=rr,none' -- node server.js`"), r);
  assert.equal(varySchedCommand(['npm', 'start']), "hotpath run --no-keepalive --vary 'NODE_CLUSTER_SCHED_POLICY=rr,none' -- npm start");
});

test('requests per worker: shares, the busiest over an even share, and the summary for report.json', () => {
  const run = syntheticCluster({ noise: 0, workerShares: [0.7, 0.3] });
  const spread = workerSpread(run)!;
  assert.deepEqual(
    spread.workers.map((w) => w.workerId),
    [1, 2],
  );
  assert.ok(Math.abs(spread.workers[0].share - 0.7) < 0.01);
  assert.ok(Math.abs(spread.busiestOverEven - 1.4) < 0.02);
  assert.ok(Math.abs((spread.busiestOverQuietest ?? 0) - 7 / 3) < 0.05);
  const cluster = summarizeTelemetry(run)!.cluster!;
  assert.equal(cluster.workers.length, 2);
  assert.equal(cluster.workers[0].requests + cluster.workers[1].requests, spread.requests);
  assert.equal(cluster.primary?.schedulingPolicy, 'rr');
});

test('fitLine: slope, intercept and correlation; no line without spread', () => {
  const f = fitLine([1, 2, 3, 4], [3, 5, 7, 9])!;
  assert.deepEqual([f.slope, f.intercept, f.r], [2, 1, 1]);
  assert.equal(fitLine([2, 2, 2], [1, 2, 3]), undefined);
  assert.equal(fitLine([1, 2], [1, 2]), undefined);
});
