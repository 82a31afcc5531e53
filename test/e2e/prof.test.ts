// `hotpath prof` on a real `node --prof` log of a known server under local load: its top JS
// functions match `node --prof-process`'s on the same log (names, shares within a point), it
// names nearly every tick (under 5 % unaccounted), and it writes a run directory whose report
// and exports come from the shared profile model.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { recordTickLog } from './helpers/prof-log.js';
import { compareTopJs } from '../../src/native/compare-prof.js';
import { runCli } from '../../src/cli/cli.js';
import type { CliIO } from '../../src/cli/io.js';
import type { ProfStatistics } from '../../src/native/prof-statistics.js';

const server = fileURLToPath(new URL('../../../test/fixtures/apps/prof-server.cjs', import.meta.url));

function capture(cwd: string) {
  let out = '';
  let err = '';
  const io: CliIO = {
    stdout: new Writable({
      write(c, _e, cb) {
        out += String(c);
        cb();
      },
    }),
    stderr: new Writable({
      write(c, _e, cb) {
        err += String(c);
        cb();
      },
    }),
    env: {},
    cwd,
    color: false,
    interactive: false,
  };
  return { io, out: () => out, err: () => err };
}

test(
  'hotpath prof: a real --prof log of a known server matches --prof-process and names nearly every tick',
  { timeout: 120_000 },
  async () => {
    const rec = await recordTickLog(server, 3);
    assert.ok(rec.requests > 50, `the load completed ${rec.requests} requests`);
    const theirs = execFileSync(process.execPath, ['--prof-process', rec.log], {
      cwd: rec.dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 << 20,
    });

    const json = capture(rec.dir);
    assert.equal(await runCli(['prof', '--json', rec.log, '--out', join(rec.dir, 'out')], json.io), 0, json.err());
    const [stats] = JSON.parse(json.out()) as ProfStatistics[];
    const cmp = compareTopJs(theirs, stats, 10, 1);
    assert.ok(cmp.rows.length >= 3, `--prof-process listed ${cmp.rows.length} JS functions:\n${theirs.slice(0, 3000)}`);
    assert.deepEqual(cmp.mismatches, [], JSON.stringify(cmp.rows, null, 1));
    // The server's own hot functions are on top, named as V8 named them.
    const topNames = stats.javascript
      .filter((r) => r.name.startsWith('JS: '))
      .slice(0, 5)
      .map((r) => r.name);
    assert.ok(
      topNames.some((n) => /fib .*prof-server\.cjs:\d+:\d+$/.test(n)),
      topNames.join('\n'),
    );
    assert.ok(
      stats.unaccounted / stats.ticks < 0.05,
      `${stats.unaccounted} of ${stats.ticks} unaccounted: ${JSON.stringify(stats.unresolved)}`,
    );
    // C++ is named from the node binary: V8's or node's own symbols appear (nm is binutils').
    const hasNm = spawnSync('nm', ['--version']).status === 0;
    if (hasNm)
      assert.ok(
        stats.cpp.some((r) => /v8::|node::/.test(r.name)),
        stats.cpp
          .slice(0, 10)
          .map((r) => r.name)
          .join('\n'),
      );

    // The text output has --prof-process's sections, in its order.
    const text = capture(rec.dir);
    assert.equal(await runCli(['prof', rec.log, '-o', join(rec.dir, 'out2')], text.io), 0, text.err());
    const sections = [...text.out().matchAll(/^ \[([^\]]+)\]:/gm)].map((m) => m[1]);
    const theirSections = [...theirs.matchAll(/^ \[([^\]]+)\]:/gm)].map((m) => m[1]);
    assert.deepEqual(sections.slice(0, theirSections.length), theirSections);
    assert.match(text.out(), /^Statistical profiling result from isolate-.*-v8\.log, \(\d+ ticks, \d+ unaccounted, 0 excluded\)\./);

    // The run directory: profile, reports and every export, made by the run's own code.
    const runs = readdirSync(join(rec.dir, 'out2'));
    assert.equal(runs.length, 1);
    const dir = join(rec.dir, 'out2', runs[0]);
    const files = readdirSync(dir);
    for (const f of ['report.html', 'report.md', 'report.json', 'meta.json', 'prof.txt', 'prof.json'])
      assert.ok(files.includes(f), `${f} in ${files.join(', ')}`);
    for (const ext of ['.cpuprofile', '.pb.gz', '.speedscope.json', '.folded'])
      assert.ok(
        files.some((f) => f.endsWith(ext)),
        `${ext} in ${files.join(', ')}`,
      );
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as { hotspots?: { function: string }[] };
    const md = readFileSync(join(dir, 'report.md'), 'utf8');
    assert.match(md, /fib|buildRows|handle|digest/);
    assert.ok(existsSync(join(dir, 'report.html')));
    const folded = readFileSync(
      join(
        dir,
        files.find((f) => f.endsWith('.folded'))!,
      ),
      'utf8',
    );
    assert.match(folded, /fib .*prof-server\.cjs/);
    void report;
    rmSync(rec.dir, { recursive: true, force: true });
  },
);

test('hotpath prof: several isolates (a worker thread) are read together, one profile each', { timeout: 60_000 }, async () => {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-prof-workers-'));
  writeFileSync(
    join(dir, 'w.cjs'),
    [
      "const { Worker, isMainThread } = require('node:worker_threads');",
      'function spin(n) { let x = 0; for (let i = 0; i < n; i++) x += Math.sqrt(i + x % 7); return x; }',
      'function mainSpin() { return spin(4e7); }',
      'function workerSpin() { return spin(4e7); }',
      'if (isMainThread) { new Worker(__filename); mainSpin(); } else { workerSpin(); }',
    ].join('\n'),
  );
  execFileSync(process.execPath, ['--prof', 'w.cjs'], { cwd: dir, stdio: 'ignore', env: { ...process.env, NODE_OPTIONS: '' } });
  const logs = readdirSync(dir)
    .filter((f) => f.endsWith('-v8.log'))
    .map((f) => join(dir, f));
  assert.equal(logs.length, 2, readdirSync(dir).join(', '));
  const c = capture(dir);
  assert.equal(await runCli(['prof', ...logs, '-o', join(dir, 'out')], c.io), 0, c.err());
  assert.equal([...c.out().matchAll(/^Statistical profiling result from /gm)].length, 2);
  const [run] = readdirSync(join(dir, 'out'));
  const meta = JSON.parse(readFileSync(join(dir, 'out', run, 'meta.json'), 'utf8')) as { profiles: { pid: number; threadId: number }[] };
  assert.deepEqual(meta.profiles.map((p) => p.threadId).sort(), [0, 1]);
  assert.equal(new Set(meta.profiles.map((p) => p.pid)).size, 1);
  rmSync(dir, { recursive: true, force: true });
});

test(
  'hotpath prof: a --prof --log-internal-timer-events log (timer lines among the ticks) gives what --prof-process gives',
  { timeout: 120_000 },
  async () => {
    const rec = await recordTickLog(server, 2, process.execPath, ['--log-internal-timer-events']);
    // Node 20 and 22 write timer-event lines among the ticks; Node 24's V8 takes the flag and writes none.
    const timers = /^timer-event/m.test(readFileSync(rec.log, 'utf8'));
    if (Number(process.versions.node.split('.')[0]) < 24) assert.ok(timers, 'the log has timer events');
    const theirs = execFileSync(process.execPath, ['--prof-process', rec.log], {
      cwd: rec.dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 << 20,
    });
    const json = capture(rec.dir);
    assert.equal(await runCli(['prof', '--json', '--no-report', rec.log], json.io), 0, json.err());
    // Timer-event lines (tens of thousands) are read as what they are, never as malformed ticks.
    // V8 may still write a stray line now and then (seen once in CI on Node 20 under load): a few
    // are skipped with a warning that quotes the first, so only a share of them fails here.
    const bad = /(\d+) malformed line\(s\) skipped/.exec(json.err());
    const lines = readFileSync(rec.log, 'utf8').split('\n').length;
    assert.ok(!bad || Number(bad[1]) <= lines / 10_000, `${json.err()} (of ${lines} lines)`);
    const [stats] = JSON.parse(json.out()) as ProfStatistics[];
    const cmp = compareTopJs(theirs, stats, 10, 1);
    assert.ok(cmp.rows.length >= 1, theirs.slice(0, 2000));
    assert.deepEqual(cmp.mismatches, [], JSON.stringify(cmp.rows, null, 1));
    assert.ok(stats.unaccounted / stats.ticks < 0.05, `${stats.unaccounted} of ${stats.ticks} unaccounted`);
    rmSync(rec.dir, { recursive: true, force: true });
  },
);
