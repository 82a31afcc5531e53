// `perf script` output into the profile model: a committed recording of a node server
// (perf record -g with --perf-basic-prof-only-functions, made on this project's CI image) keeps
// kernel, libuv, V8 C++ and JS frames in one stack; bad input is a coded error.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PassThrough, Writable } from 'node:stream';
import { parsePerfScript, parsePerfScriptFile, perfCallFrame, PerfSampleReader, readPerfLines } from '../../src/native/perf-script.js';
import { runCli } from '../../src/cli/cli.js';
import type { CliIO } from '../../src/cli/io.js';

const fixture = fileURLToPath(new URL('../../../test/fixtures/perf/node-server.perf', import.meta.url));

test('perf frames: JS from the perf map keeps file and line; kernel and C++ keep their symbol', () => {
  assert.deepEqual(perfCallFrame('JS:*fib /app/server.js:3:13+0x8', '/tmp/perf-355.map'), {
    functionName: 'fib',
    scriptId: '1',
    url: 'file:///app/server.js',
    lineNumber: 2,
    columnNumber: 12,
  });
  assert.equal(perfCallFrame('LazyCompile:~emit node:events:471:44', '/tmp/perf-1.map').url, 'node:events');
  assert.equal(perfCallFrame('do_epoll_wait+0x1a', '[kernel.kallsyms]').functionName, 'do_epoll_wait [kernel]');
  assert.equal(perfCallFrame('uv__io_poll+0x1ad', '/usr/bin/node').functionName, 'uv__io_poll');
  assert.equal(perfCallFrame('[unknown]', '/usr/lib/libc.so.6').functionName, '[unknown] (libc.so.6)');
});

test('perf script: one profile per process, its threads grouped under it, JS under native callers', () => {
  const r = parsePerfScript(readFileSync(fixture, 'utf8'), 'node-server.perf');
  assert.equal(r.skippedLines, 0);
  const [main] = r.processes;
  assert.equal(main.comm, 'node');
  const names = main.profile.nodes.map((n) => n.callFrame.functionName);
  assert.ok(names.includes('fib'), 'JS from the perf map');
  assert.ok(names.includes('uv__io_poll'), 'libuv');
  assert.ok(
    names.some((n) => n.startsWith('v8::')),
    'V8 C++',
  );
  assert.ok(
    names.some((n) => n.endsWith('[kernel]')),
    'kernel',
  );
  // fib's caller chain reaches libuv: one stack from the event loop down to the JS.
  const byId = new Map(main.profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of main.profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const fib = main.profile.nodes.find((n) => n.callFrame.functionName === 'fib')!;
  const chain: string[] = [];
  for (let id: number | undefined = fib.id; id !== undefined; id = parent.get(id)) chain.push(byId.get(id)!.callFrame.functionName);
  assert.ok(chain.includes('uv_run'), chain.join(' < '));
  assert.equal(main.profile.samples.length, main.samples);
});

test('hotpath import writes a run directory with the report and exports; bad input is a coded error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-import-'));
  let err = '';
  const sink = new Writable({
    write(c, _e, cb) {
      err += String(c);
      cb();
    },
  });
  const io: CliIO = { stdout: sink, stderr: sink, env: {}, cwd: dir, color: false, interactive: false };
  assert.equal(await runCli(['import', fixture, '-o', join(dir, 'out')], io), 0, err);
  const [run] = readdirSync(join(dir, 'out'));
  const files = readdirSync(join(dir, 'out', run));
  for (const f of ['report.html', 'report.md', 'report.json']) assert.ok(files.includes(f), files.join(', '));
  assert.ok(files.some((f) => f.endsWith('.folded')));
  const folded = readFileSync(
    join(
      dir,
      'out',
      run,
      files.find((f) => f.endsWith('.folded'))!,
    ),
    'utf8',
  );
  assert.match(folded, /uv_run;.*;fib /);
  for (const [name, text] of [
    ['notes.txt', 'hello world\n'],
    ['bin.data', 'PERFILE2\u0000\u0001'],
  ] as const) {
    err = '';
    const file = join(dir, name);
    writeFileSync(file, text);
    assert.equal(await runCli(['import', file, '-o', join(dir, 'out')], io), 1, err);
    assert.match(err, /HOTPATH_ERR_PERF_SCRIPT/);
    assert.doesNotMatch(err, /\n\s+at /);
  }
  err = '';
  assert.equal(await runCli(['import', join(dir, 'missing.perf')], io), 1);
  assert.match(err, /HOTPATH_ERR_PERF_SCRIPT/);
});

test('perf script read as a stream: each sample is handed on once its frames are read, and a file gives what its text gives', async () => {
  const input = new PassThrough();
  const seen: number[] = [];
  const reader = new PerfSampleReader('live.perf', (r) => seen.push(r.tid));
  const done = readPerfLines(input, reader);
  const sample = (tid: number) => `node 100/${tid} 10.${tid}: 1001001 cpu-clock:ppp: \n\t    14ac8a7 uv_run+0x187 (/usr/bin/node)\n\n`;
  input.write(sample(100) + sample(101));
  await new Promise((r) => setImmediate(r));
  // Both samples are out while the stream is still open: nothing waits for the end of the text.
  assert.deepEqual(seen, [100, 101]);
  input.end(sample(102));
  await done;
  assert.deepEqual(seen, [100, 101, 102]);
  // The file streamed twice (pids, then profiles) is the text parsed whole.
  const whole = parsePerfScript(readFileSync(fixture, 'utf8'), 'node-server.perf');
  const streamed = await parsePerfScriptFile(fixture, 'node-server.perf');
  assert.deepEqual(streamed, whole);
  // Not perf script: the stream is let go at the first lines that cannot be, with the coded error.
  const junk = new PassThrough();
  const failed = readPerfLines(junk, new PerfSampleReader('junk.txt', () => undefined));
  junk.write('hello\n'.repeat(60));
  await assert.rejects(
    failed,
    (e: Error & { code?: string }) => e.code === 'HOTPATH_ERR_PERF_SCRIPT' && /no sample header/.test(e.message),
  );
  assert.ok(junk.destroyed);
});

test('perf script with C++ names perf left mangled (--no-demangle) or versioned: named as hotpath prof and run --native name them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-import-names-'));
  try {
    const file = join(dir, 'mangled.perf');
    const sample = (t: string) =>
      [
        `node   355  ${t}:   10101010 cpu-clock:ppp: `,
        '\t    55d0a1b2c3d4 _ZN4node11StringBytes5WriteEPN2v87IsolateEPcmNS1_5LocalINS1_5ValueEEENS_8encodingE+0x32 (/usr/bin/node)',
        '\t    7f0000008baf pthread_mutex_init@@GLIBC_2.2.5+0x72 (/usr/lib/x86_64-linux-gnu/libc.so.6)',
        '\t    7f803000cb08 JS:*fib /tmp/proflab/server.js:3:13+0x8 (/tmp/perf-355.map)',
        '\t    55d0a1b2c3d5 uv_run+0x187 (/usr/bin/node)',
        '',
      ].join('\n');
    writeFileSync(file, sample('2814.955891') + sample('2814.965991'));
    const r = await parsePerfScriptFile(file, 'mangled.perf');
    const names = r.processes[0].profile.nodes.map((n) => n.callFrame.functionName);
    assert.ok(names.includes('pthread_mutex_init'), names.join(', '));
    assert.ok(!names.some((n) => n.includes('@@')), names.join(', '));
    // c++filt, as perf prints a demangled name (no parameter types); left as it is without c++filt.
    const cxxfilt = spawnSync('c++filt', ['--version']).status === 0;
    if (cxxfilt) assert.ok(names.includes('node::StringBytes::Write'), names.join(', '));
    assert.ok(names.includes('fib') && names.includes('uv_run'), names.join(', '));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
