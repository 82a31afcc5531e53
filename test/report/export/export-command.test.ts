// `hotpath export` end to end on a run directory holding a real profile: every format is
// written where expected and decodes; --thread, --heap and --out; coded errors for a missing
// run dir, a run without profiles and a malformed profile.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { runCli } from '../../../src/cli/cli.js';
import type { CliIO } from '../../../src/cli/io.js';
import { buildCallTree } from '../../../src/profile/build-call-tree.js';
import { buildHeapTree } from '../../../src/profile/build-heap-tree.js';
import { parseHeapProfile } from '../../../src/profile/heap-profile.js';
import { fileURLToPath } from 'node:url';
import { FAKE_DEP, WORK_APP, cpuProfileOf, writeProject } from '../../profile/profile-fixture.js';

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

function writeRunDir(dir: string, profiles: { kind: 'cpu' | 'heap'; pid: number; threadId: number; file: string }[], cwd: string) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'meta.json'),
    JSON.stringify({
      version: 1,
      hotpathVersion: '0.0.0-test',
      command: ['node', 'app.js'],
      cwd,
      startedAt: 1_700_000_000_000,
      phases: [],
      processes: profiles.map((p) => ({ pid: p.pid, threadId: p.threadId, isTarget: p.pid === 101 })),
      outcome: { status: 'completed' },
      options: {},
      profiles: profiles.map((p) => ({ ...p, start: 1_700_000_000_000, end: 1_700_000_002_000 })),
    }),
  );
}

describe('hotpath export', () => {
  let project: string;
  let run: string;
  let totalUs: number;
  before(() => {
    project = writeProject({ 'app.js': WORK_APP, 'node_modules/fakedep/index.js': FAKE_DEP });
    const profile = cpuProfileOf(project, 'app.js', { scriptArgs: ['600'], intervalUs: 1000 });
    totalUs = buildCallTree(profile, { cwd: project }).totalUs;
    run = join(project, '.hotpath', 'run1');
    writeRunDir(
      run,
      [
        { kind: 'cpu', pid: 101, threadId: 0, file: 'cpu-101-0.cpuprofile' },
        { kind: 'cpu', pid: 202, threadId: 0, file: 'cpu-202-0.cpuprofile' },
      ],
      project,
    );
    writeFileSync(join(run, 'cpu-101-0.cpuprofile'), JSON.stringify(profile));
    writeFileSync(
      join(run, 'cpu-202-0.cpuprofile'),
      JSON.stringify({ ...profile, samples: profile.samples.slice(0, 10), timeDeltas: profile.timeDeltas.slice(0, 10) }),
    );
  });
  after(() => rmSync(project, { recursive: true, force: true }));

  it("writes gzipped pprof next to the target thread's profile and prints its path on stderr", async () => {
    const io = captureIO(project);
    assert.equal(await runCli(['export', run, '--format', 'pprof'], io), 0, io.err());
    const file = join(run, 'cpu-101-0.pb.gz');
    assert.equal(io.err().split('\n')[0], file);
    assert.match(io.err(), /others: 202:0/);
    assert.equal(io.out(), '');
    const decoded = Profile.decode(gunzipSync(readFileSync(file)));
    const ns = decoded.sample.reduce((s, x) => s + Number(x.value[1]), 0);
    assert.ok(Math.abs(ns - totalUs * 1000) <= decoded.sample.length);
  });

  it('writes speedscope and folded files, honours --out (creating its directory) and --thread', async () => {
    const io2 = captureIO(project);
    assert.equal(
      await runCli(['export', '.hotpath/run1', '-f', 'speedscope', '--out', 'out/s.json', '--thread', '202:0'], io2),
      0,
      io2.err(),
    );
    const s = JSON.parse(readFileSync(join(project, 'out/s.json'), 'utf8')) as { profiles: { samples: unknown[] }[] };
    assert.equal(s.profiles[0].samples.length, 10);
    const io3 = captureIO(project);
    assert.equal(await runCli(['export', run, '--format', 'folded'], io3), 0, io3.err());
    const folded = readFileSync(join(run, 'cpu-101-0.folded'), 'utf8');
    assert.equal(
      folded
        .trimEnd()
        .split('\n')
        .reduce((t, l) => t + Number(l.split(' ').pop()), 0),
      totalUs,
    );
  });

  it('exports the heap profile with --heap, in bytes', async () => {
    const heapRun = join(project, '.hotpath', 'heap');
    writeRunDir(heapRun, [{ kind: 'heap', pid: 101, threadId: 0, file: 'heap-101-0.heapprofile' }], '/project');
    copyFileSync(
      fileURLToPath(new URL('../../../../test/fixtures/profiles/alloc-node22.heapprofile', import.meta.url)),
      join(heapRun, 'heap-101-0.heapprofile'),
    );
    const io = captureIO(project);
    assert.equal(await runCli(['export', heapRun, '--heap', '--format', 'pprof'], io), 0, io.err());
    const decoded = Profile.decode(gunzipSync(readFileSync(join(heapRun, 'heap-101-0.pb.gz'))));
    const str = decoded.stringTable.strings;
    assert.equal(str[Number(decoded.sampleType[0].unit)], 'bytes');
    const bytes = decoded.sample.reduce((s, x) => s + Number(x.value[0]), 0);
    const tree = buildHeapTree(parseHeapProfile(readFileSync(join(heapRun, 'heap-101-0.heapprofile'), 'utf8')), { cwd: '/project' });
    assert.equal(bytes, tree.totalUs);
    assert.ok(decoded.function.some((f) => str[Number(f.filename)] === 'heap.js'));
  });

  it('hands out the original .cpuprofile, copied with --out', async () => {
    const io = captureIO(project);
    assert.equal(await runCli(['export', run, '--format', 'cpuprofile', '-o', 'copy.cpuprofile'], io), 0, io.err());
    assert.deepEqual(readFileSync(join(project, 'copy.cpuprofile')), readFileSync(join(run, 'cpu-101-0.cpuprofile')));
  });

  it('fails with coded errors', async () => {
    const cases: [string[], string, number][] = [
      [['export', join(project, 'nope')], 'HOTPATH_ERR_RUN_DIR', 1],
      [['export', run, '--heap'], 'HOTPATH_ERR_NO_PROFILE', 1],
      [['export', run, '--thread', '999:1'], 'HOTPATH_ERR_NO_PROFILE', 1],
      [['export', run, '--thread', 'x'], 'HOTPATH_ERR_INVALID_OPTION', 2],
      [['export', run, '--format', 'svg'], 'HOTPATH_ERR_INVALID_OPTION', 2],
      [['export'], 'HOTPATH_ERR_MISSING_ARGUMENT', 2],
    ];
    for (const [argv, code, exit] of cases) {
      const io = captureIO(project);
      assert.equal(await runCli(argv, io), exit, `${argv.join(' ')}: ${io.err()}`);
      assert.match(io.err(), new RegExp(`error ${code}:`), argv.join(' '));
    }
    const bad = join(project, '.hotpath', 'bad');
    writeRunDir(bad, [{ kind: 'cpu', pid: 101, threadId: 0, file: 'cpu-101-0.cpuprofile' }], project);
    writeFileSync(join(bad, 'cpu-101-0.cpuprofile'), '{"nodes": [');
    const io = captureIO(project);
    assert.equal(await runCli(['export', bad], io), 1);
    assert.match(io.err(), /error HOTPATH_ERR_PROFILE: .*cpu-101-0\.cpuprofile/);
    assert.ok(!existsSync(join(bad, 'cpu-101-0.pb.gz')));
  });
});
