// Issue 23, items 3, 5, 6 and 7: `report` and `export` on run directories that are hostile,
// huge or damaged. Every case ends in a report (with warnings) or a coded error.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/cli.js';
import type { CliIO } from '../../src/cli/io.js';
import { readRunDir } from '../../src/profile/read-run.js';
import { writeReports } from '../../src/report/write-reports.js';
import { RUN_DIR_VERSION } from '../../src/run-dir/schema.js';
import { CLI, copyRun, realRunDir, tempBase } from './helpers/real-run.js';
import type { RunData } from '../../src/run-dir/run-data.js';
import type { SampleMessage } from '../../src/agent/protocol.js';

function captureIO(cwd: string): CliIO & { out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let o = '',
    e = '';
  stdout.on('data', (d) => {
    o += d;
  });
  stderr.on('data', (d) => {
    e += d;
  });
  return { stdout, stderr, env: {}, cwd, color: false, interactive: false, out: () => o, err: () => e };
}

const base = tempBase();
after(() => rmSync(base, { recursive: true, force: true }));
before(() => {
  realRunDir(base);
});

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
const writeJson = (file: string, v: unknown) => writeFileSync(file, JSON.stringify(v));
const cpuFile = (dir: string) => readdirSync(dir).find((f) => /^cpu-.*\.cpuprofile$/.test(f))!;

async function cli(args: string[], cwd: string) {
  const io = captureIO(cwd);
  const code = await runCli(args, io);
  return { code, err: io.err(), out: io.out() };
}

describe('issue 23.3: paths stay inside the run directory', () => {
  test('a profile file in meta.json that climbs out with .. is HOTPATH_ERR_RUN_DIR_PATH for report and export, and nothing outside is read', async () => {
    const dir = copyRun(base, 'dotdot');
    const elsewhere = join(base, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(elsewhere, 'x.cpuprofile'), readFileSync(join(dir, cpuFile(dir))));
    const meta = readJson(join(dir, 'meta.json')) as { profiles: { file: string }[] };
    meta.profiles[0].file = '../elsewhere/x.cpuprofile';
    writeJson(join(dir, 'meta.json'), meta);
    for (const args of [
      ['report', dir],
      ['export', dir, '--format', 'folded'],
    ]) {
      const r = await cli(args, base);
      assert.equal(r.code, 1, r.err);
      assert.match(r.err, /HOTPATH_ERR_RUN_DIR_PATH/);
      assert.doesNotMatch(r.err, /bug in hotpath/);
    }
    assert.deepEqual(readdirSync(elsewhere), ['x.cpuprofile'], 'nothing written next to the file outside');
  });

  test('an absolute path in a telemetry profile message is refused', async () => {
    const dir = copyRun(base, 'absolute');
    const meta = readJson(join(dir, 'meta.json'));
    meta.profiles = [];
    writeJson(join(dir, 'meta.json'), meta);
    appendFileSync(
      join(dir, 'telemetry.ndjson'),
      JSON.stringify({
        v: 1,
        pid: 1,
        threadId: 0,
        t: Date.now(),
        type: 'profile',
        kind: 'cpu',
        file: join(base, 'abs.cpuprofile'),
        start: 1,
        end: 2,
      }) + '\n',
    );
    await assert.rejects(readRunDir(dir), { code: 'HOTPATH_ERR_RUN_DIR_PATH' });
  });

  test('a run file that is a symbolic link out of the directory is refused', async () => {
    const dir = copyRun(base, 'symlink');
    const outside = join(base, 'secret.json');
    writeFileSync(outside, readFileSync(join(dir, 'load.json')));
    rmSync(join(dir, 'load.json'));
    symlinkSync(outside, join(dir, 'load.json'));
    await assert.rejects(readRunDir(dir), { code: 'HOTPATH_ERR_RUN_DIR_PATH', message: /symbolic link/ });
    // A profile linked out of the directory too.
    const dir2 = copyRun(base, 'symlink-profile');
    const cpu = cpuFile(dir2);
    writeFileSync(join(base, 'outside.cpuprofile'), readFileSync(join(dir2, cpu)));
    rmSync(join(dir2, cpu));
    symlinkSync(join(base, 'outside.cpuprofile'), join(dir2, cpu));
    const r = await cli(['export', dir2, '--format', 'pprof'], base);
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /HOTPATH_ERR_RUN_DIR_PATH/);
  });

  test('export and report replace a symbolic link planted under the name they write, never writing through it', async () => {
    const dir = copyRun(base, 'planted');
    const victim = join(base, 'victim.txt');
    writeFileSync(victim, 'precious');
    const out = join(dir, cpuFile(dir).replace(/\.cpuprofile$/, '.folded'));
    symlinkSync(victim, out);
    rmSync(join(dir, 'report.md'));
    symlinkSync(victim, join(dir, 'report.md'));
    assert.equal((await cli(['export', dir, '--format', 'folded'], base)).code, 0);
    assert.equal((await cli(['report', dir], base)).code, 0);
    assert.equal(readFileSync(victim, 'utf8'), 'precious');
    assert.ok(!lstatSync(out).isSymbolicLink() && readFileSync(out, 'utf8').length > 0);
    assert.ok(!lstatSync(join(dir, 'report.md')).isSymbolicLink());
  });
});

describe('issue 23.5: long runs', () => {
  test('150,000 telemetry samples read, window and report without a stack overflow', async () => {
    const dir = join(base, 'long');
    mkdirSync(dir);
    const T0 = 1_795_000_000_000;
    writeJson(join(dir, 'meta.json'), {
      version: RUN_DIR_VERSION,
      hotpathVersion: 'test',
      command: ['node', 'app.js'],
      cwd: dir,
      startedAt: T0,
      phases: [{ phase: 'load', start: T0 }],
      processes: [{ pid: 10, threadId: 0, isTarget: true }],
      outcome: { status: 'interrupted', reason: 'test' },
      options: {},
      profiles: [],
    });
    const eld = { count: 10, min: 0, mean: 1, max: 2, p50: 1, p90: 2, p99: 2 };
    const lines: string[] = [JSON.stringify({ v: 1, pid: 10, threadId: 0, t: T0, type: 'listen', address: '127.0.0.1', port: 3000 })];
    for (let i = 0; i < 150_000; i++) {
      lines.push(
        JSON.stringify({
          v: 1,
          pid: 10,
          threadId: 0,
          t: T0 + i * 10,
          type: 'sample',
          intervalMs: 10,
          eld,
          elu: 0.2,
          cpu: { user: 100, system: 10 },
          mem: { rss: 5e7, heapUsed: 1e7, heapTotal: 2e7, external: 1, arrayBuffers: 1 },
          resources: {},
          http: {
            started: 5,
            finished: 5,
            active: 0,
            connections: 0,
            openConnections: 2,
            latency: eld,
            statusCodes: { 200: 5 },
            reused: 5,
            closed: 0,
            requestsPerClosedConnection: 0,
          },
        }),
      );
    }
    writeFileSync(join(dir, 'telemetry.ndjson'), lines.join('\n') + '\n');
    const run = await readRunDir(dir);
    // Over 32 MB: read as per-second aggregates (merge-samples.ts), 100 samples of 10 ms each.
    assert.equal(run.threads[0].samples.length, 1500);
    assert.equal(run.threads[0].samples[0].intervalMs, 1000);
    assert.equal(run.threads[0].samples[0].http?.started, 500);
    assert.deepEqual(run.loadWindow, { start: T0, end: T0 + 149_999 * 10 });
    const report = await writeReports(dir, { run, html: false });
    assert.ok(report.telemetry !== null);
    const merged = report.telemetry.http?.requests ?? 0;
    assert.ok(merged >= 749_990 && merged <= 750_000, `every request in the window counted once: ${merged}`);
    // The analysis and the reports over 150,000 samples as such (a run under the size limit at
    // a fine interval): no spread or recursion over them either.
    const raw = lines.slice(1).map((l) => JSON.parse(l) as SampleMessage);
    const full: RunData = { ...run, threads: [{ ...run.threads[0], samples: raw }] };
    const fullReport = await writeReports(dir, { run: full });
    assert.ok(Math.abs((fullReport.telemetry?.http?.requests ?? 0) - merged) <= 5, 'the aggregates count what the raw samples do');
  });
});

describe('issue 23.6: profiles of any shape', () => {
  function chainProfile(depth: number) {
    const nodes = [
      {
        id: 1,
        callFrame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
        hitCount: 0,
        children: [2],
      },
    ];
    for (let i = 2; i <= depth + 1; i++) {
      nodes.push({
        id: i,
        callFrame: { functionName: `f${i % 7}`, scriptId: '1', url: 'file:///app/deep.js', lineNumber: i % 50, columnNumber: 2 },
        hitCount: 1,
        children: i <= depth ? [i + 1] : [],
      });
    }
    const samples = nodes.slice(1).map((n) => n.id);
    return { nodes, startTime: 0, endTime: samples.length * 1000, samples, timeDeltas: samples.map(() => 1000) };
  }

  test('exporting a 20,000-frame-deep profile sampled at every depth fits in 300 MB of heap, in every format', () => {
    const dir = join(base, 'deep');
    mkdirSync(dir);
    writeJson(join(dir, 'meta.json'), {
      version: RUN_DIR_VERSION,
      hotpathVersion: 'test',
      command: ['node', 'deep.js'],
      cwd: '/app',
      startedAt: 1,
      phases: [],
      processes: [{ pid: 7, threadId: 0, isTarget: true }],
      outcome: { status: 'completed' },
      options: {},
      profiles: [{ kind: 'cpu', pid: 7, threadId: 0, file: 'cpu-7-0.cpuprofile', start: 1, end: 2 }],
    });
    writeJson(join(dir, 'cpu-7-0.cpuprofile'), chainProfile(20_000));
    for (const format of ['folded', 'pprof', 'speedscope']) {
      const r = spawnSync(process.execPath, ['--max-old-space-size=300', CLI, 'export', dir, '--format', format], {
        encoding: 'utf8',
        timeout: 120_000,
      });
      assert.equal(r.status, 0, `${format}: ${r.stderr}`);
    }
    const folded = readFileSync(join(dir, 'cpu-7-0.folded'), 'utf8').trimEnd().split('\n');
    assert.ok(folded.length >= 19_999, `one line per sampled stack (the first sample may weigh 0): ${folded.length}`);
    assert.ok(
      folded.every((l) => l.split(';').length <= 512),
      'deep stacks are cut to 512 frames',
    );
    assert.match(folded[folded.length - 1], /\(frames elided: deep stack\)/);
  });

  test('a profile whose nodes form a cycle is HOTPATH_ERR_PROFILE for export and a warning (no healthy verdict) for report, in bounded time', async () => {
    const dir = copyRun(base, 'cycle');
    const file = join(dir, cpuFile(dir));
    const p = readJson(file) as { nodes: { id: number; children?: number[] }[] };
    const last = p.nodes[p.nodes.length - 1];
    last.children = [...(last.children ?? []), p.nodes[0].id];
    writeJson(file, p);
    const exp = await cli(['export', dir, '--format', 'pprof'], base);
    assert.equal(exp.code, 1);
    assert.match(exp.err, /HOTPATH_ERR_PROFILE: .*cycle/);
    const r = spawnSync(process.execPath, [CLI, 'report', dir, '--json'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { findings: { category: string }[]; warnings?: string[] };
    assert.ok(!report.findings.some((f) => f.category === 'healthy'), 'not called healthy');
    assert.ok(
      report.warnings?.some((w) => /cpu profile .* cannot be used.*cycle/.test(w)),
      String(report.warnings),
    );
    assert.match(r.stderr, /warning cpu profile .* cannot be used/);
    assert.match(readFileSync(join(dir, 'report.md'), 'utf8'), /Verdict:\*\* no problem found, but the diagnosis is incomplete/);
  });

  test('a child id that names no node is HOTPATH_ERR_PROFILE', async () => {
    const dir = copyRun(base, 'missing-id');
    const file = join(dir, cpuFile(dir));
    const p = readJson(file) as { nodes: { id: number; children?: number[] }[] };
    p.nodes[0].children = [...(p.nodes[0].children ?? []), 987654321];
    writeJson(file, p);
    const exp = await cli(['export', dir, '--format', 'folded'], base);
    assert.match(exp.err, /HOTPATH_ERR_PROFILE: .*987654321 that does not exist/);
  });

  for (const [name, damage] of [
    ['empty', () => ''],
    ['truncated', (t: string) => t.slice(0, Math.floor(t.length / 2))],
    ['wrong-shaped', () => JSON.stringify({ nodes: 'none', samples: {} })],
  ] as const) {
    test(`a ${name} CPU profile is reported with a warning, never as healthy`, async () => {
      const dir = copyRun(base, name);
      const file = join(dir, cpuFile(dir));
      writeFileSync(file, damage(readFileSync(file, 'utf8')));
      const r = await cli(['report', dir], base);
      assert.equal(r.code, 0, r.err);
      assert.match(r.err, /warning cpu profile .* cannot be used/);
      assert.doesNotMatch(r.err, /healthy/);
      const report = readJson(join(dir, 'report.json')) as { findings: { category: string }[] };
      assert.ok(!report.findings.some((f) => f.category === 'healthy'));
    });
  }
});

describe('issue 23.7: telemetry lines with missing fields; reports all or nothing', () => {
  test('a sample line that is JSON but lacks fields is skipped with a warning, and the report is written', async () => {
    const dir = copyRun(base, 'missing-fields');
    const first = JSON.parse(readFileSync(join(dir, 'telemetry.ndjson'), 'utf8').split('\n')[0]) as {
      pid: number;
      threadId: number;
      t: number;
    };
    appendFileSync(
      join(dir, 'telemetry.ndjson'),
      [
        JSON.stringify({ v: 1, pid: first.pid, threadId: first.threadId, t: first.t + 500, type: 'sample' }),
        JSON.stringify({
          v: 1,
          pid: first.pid,
          threadId: first.threadId,
          t: first.t + 600,
          type: 'sample',
          intervalMs: 100,
          eld: null,
          elu: 'high',
        }),
        JSON.stringify({ v: 1, pid: first.pid, threadId: first.threadId, t: first.t + 700, type: 'stall' }),
        JSON.stringify({ v: 1, pid: first.pid, threadId: first.threadId, t: first.t + 800, type: 'growth', listeners: [{}] }),
      ].join('\n') + '\n',
    );
    const r = await cli(['report', dir], base);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /telemetry\.ndjson: line \d+ is an agent message with missing or malformed fields and was skipped/);
    assert.doesNotMatch(r.err, /bug in hotpath/);
  });

  test('when one report cannot be written, none is replaced', async () => {
    const dir = copyRun(base, 'all-or-nothing');
    const before = readFileSync(join(dir, 'report.json'), 'utf8');
    rmSync(join(dir, 'report.md'));
    mkdirSync(join(dir, 'report.md'));
    await assert.rejects(writeReports(dir));
    assert.equal(readFileSync(join(dir, 'report.json'), 'utf8'), before, 'report.json untouched');
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.endsWith('.tmp')),
      [],
      'no temporary file left',
    );
    assert.ok(existsSync(join(dir, 'report.html')));
  });
});
