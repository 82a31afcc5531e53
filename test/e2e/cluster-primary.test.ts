// End to end (issue 24): the cluster primary as the bottleneck, on examples/cluster-round-robin
// (two workers). Under a `Connection: close` load the primary's own stream names its cost per
// connection (HOTPATH_CLUSTER_PRIMARY); with keep-alive, or with SCHED_NONE, it gets no such
// finding; every cluster run reports requests per worker (report.json, terminal, report.md), and
// the primary is never one of the serving threads (issue 17).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Report } from '../../src/report/report-schema.js';
import { examplesDir } from '../../src/cli/commands/demo.js';
import { readRunDir } from '../../src/profile/read-run.js';
import { runCli, tempOut } from '../run/helpers/run-cli.js';
import { findingsSummary } from './helpers/diagnosis.js';

const out = tempOut();
after(() => out.cleanup());
const dir = join(examplesDir, 'cluster-round-robin');

async function runCluster(flags: string[], env: NodeJS.ProcessEnv = {}): Promise<{ report: Report; stderr: string }> {
  const r = await runCli(['run', '-c', '50', '-d', '4', ...flags, '--out', out.out, '--json', '--', 'node', 'server.js'], {
    cwd: dir,
    env: { PORT: '0', ...env },
    timeoutMs: 120_000,
  });
  let report: Report;
  try {
    report = JSON.parse(r.stdout) as Report;
  } catch {
    throw new Error(`hotpath run exited ${r.code ?? r.signal} without a report\n${r.stderr}`);
  }
  assert.equal(report.target.outcome.status, 'completed', r.stderr);
  return { report, stderr: r.stderr };
}

/** The cluster line of report.json, the terminal and report.md, and the primary kept apart from the targets. */
async function checkClusterReported(report: Report, stderr: string): Promise<NonNullable<NonNullable<Report['telemetry']>['cluster']>> {
  const cluster = report.telemetry?.cluster;
  assert.ok(cluster, 'telemetry.cluster');
  assert.equal(cluster.workers.length, 2, JSON.stringify(cluster));
  assert.equal(
    cluster.workers.reduce((n, w) => n + w.requests, 0),
    report.telemetry!.http!.requests,
  );
  assert.ok(
    cluster.workers.every((w) => w.requests > 0),
    JSON.stringify(cluster.workers),
  );
  assert.match(stderr, /cluster {3}2 workers, requests \d+ % \/ \d+ %/);
  assert.match(readFileSync(join(report.runDir, 'report.md'), 'utf8'), /\*\*Cluster:\*\* 2 workers, requests/);
  const data = await readRunDir(report.runDir);
  const primaries = data.meta.processes.filter((p) => p.isClusterPrimary);
  assert.equal(primaries.length, 1);
  const primary = data.threads.find((t) => t.pid === primaries[0].pid)!;
  assert.deepEqual(primary.samples, [], 'the primary sends no sample (issue 17)');
  assert.ok((primary.primary?.length ?? 0) > 0, 'the primary sends its own stream');
  assert.ok(primary.primary!.every((m) => m.role === 'cluster-primary'));
  assert.ok(!report.telemetry!.targets.some((t) => t.pid === primary.pid), 'the primary is no target');
  assert.ok(!data.profiles.some((p) => p.pid === primary.pid), 'the primary is not profiled');
  assert.equal(cluster.primary?.pid, primary.pid);
  return cluster;
}

test(
  'cluster behind Connection: close: the primary is named with its cost per connection and its headroom',
  { timeout: 150_000 },
  async () => {
    const { report, stderr } = await runCluster(['--no-keepalive']);
    const summary = findingsSummary(report);
    const cluster = await checkClusterReported(report, stderr);
    const f = report.findings.find((x) => x.code === 'HOTPATH_CLUSTER_PRIMARY');
    assert.ok(f, summary);
    assert.equal(f.category, 'connection-churn');
    assert.equal(f.evidence.role, 'cluster-primary');
    assert.equal(f.evidence.pid, cluster.primary!.pid);
    const perConn = f.evidence.cpuPerConnectionUs as number;
    assert.ok(perConn > 0, summary);
    assert.match(f.title, new RegExp(`primary spends ${Math.round(perConn)} µs of CPU per connection`));
    assert.match(f.summary, new RegExp(`cluster primary \\(pid ${cluster.primary!.pid}\\)`));
    assert.equal(f.culprit?.file, 'node:internal/cluster/round_robin_handle');
    assert.equal(f.evidence.forkSite, 'server.js:11');
    assert.equal(f.evidence.schedulingPolicy, 'rr');
    // Every connection went through the primary: its hand-offs are the workers' new connections.
    const handed = f.evidence.connectionsHandedOff as number;
    const requests = report.telemetry!.http!.requests;
    assert.ok(handed > requests * 0.8 && handed < requests * 1.2, `${handed} hand-offs for ${requests} requests`);
    assert.ok(
      (f.evidence.saturationConnectionsPerSecond as number) >
        (f.evidence.connectionsPerSecond as number) * (f.evidence.headroom as number) * 0.99,
    );
    assert.match(f.recommendation, /NODE_CLUSTER_SCHED_POLICY=rr,none/);
    assert.match(stderr, /primary spends \d+ µs of CPU per connection/);
  },
);

test('the same cluster with keep-alive: no primary finding, requests per worker still reported', { timeout: 150_000 }, async () => {
  const { report, stderr } = await runCluster([]);
  const cluster = await checkClusterReported(report, stderr);
  assert.ok(!report.findings.some((x) => x.code === 'HOTPATH_CLUSTER_PRIMARY'), findingsSummary(report));
  assert.ok(cluster.primary!.connectionsHandedOff < report.telemetry!.http!.requests / 20, JSON.stringify(cluster.primary));
});

test(
  'the same cluster under SCHED_NONE: the workers accept, the primary hands nothing off, the spread is measured',
  { timeout: 150_000 },
  async () => {
    const { report, stderr } = await runCluster(['--no-keepalive'], { NODE_CLUSTER_SCHED_POLICY: 'none' });
    const cluster = await checkClusterReported(report, stderr);
    assert.equal(cluster.primary?.schedulingPolicy, 'none');
    assert.equal(cluster.primary?.connectionsHandedOff, 0);
    assert.ok(!report.findings.some((x) => x.code === 'HOTPATH_CLUSTER_PRIMARY'), findingsSummary(report));
    assert.ok(cluster.busiestOverEven >= 1);
  },
);
