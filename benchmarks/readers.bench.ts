// Run-directory readers under stress (issue 23): (a) a long run's telemetry (hundreds of
// thousands of samples, ~100 MB) read and reported in a child process, with its time and peak
// RSS beside the file's size; (b) the long fuzz run of the readers (test/run-dir/helpers/
// fuzz-run-dir.ts): thousands of seeded damages of a real run directory, every one ending in a
// report or a coded error, none writing outside its directory.

import { spawnSync } from 'node:child_process';
import { mkdirSync, openSync, writeSync, closeSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext, BenchSuite } from './suite.js';
import { realRunDir } from '../test/run-dir/helpers/real-run.js';
import { fuzzRunDir } from '../test/run-dir/helpers/fuzz-run-dir.js';

const T0 = 1_795_000_000_000;

/** A run directory whose telemetry holds `samples` samples of one target thread at 10 ms (as `--interval 10`). */
export function longTelemetryRun(dir: string, samples: number): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'meta.json'),
    JSON.stringify({
      version: 1,
      hotpathVersion: 'bench',
      command: ['node', 'app.js'],
      cwd: dir,
      startedAt: T0,
      phases: [{ phase: 'load', start: T0, end: T0 + samples * 10 }],
      processes: [{ pid: 10, threadId: 0, isTarget: true }],
      outcome: { status: 'completed' },
      options: {},
      profiles: [],
    }),
  );
  const fd = openSync(join(dir, 'telemetry.ndjson'), 'w');
  writeSync(fd, JSON.stringify({ v: 1, pid: 10, threadId: 0, t: T0, type: 'listen', address: '127.0.0.1', port: 3000 }) + '\n');
  let chunk: string[] = [];
  for (let i = 0; i < samples; i++) {
    const eld = { count: 10, min: 0.01, mean: 0.5 + (i % 7) / 10, max: 2 + (i % 13), p50: 0.4, p90: 1.2, p99: 1.9 + (i % 5) / 10 };
    chunk.push(
      JSON.stringify({
        v: 1,
        pid: 10,
        threadId: 0,
        t: T0 + i * 10,
        type: 'sample',
        intervalMs: 10,
        eld,
        elu: 0.3 + (i % 10) / 100,
        cpu: { user: 2000 + (i % 300), system: 300 },
        mem: { rss: 8e7 + i * 10, heapUsed: 2e7 + (i % 1000) * 1000, heapTotal: 4e7, external: 1e6, arrayBuffers: 1e5 },
        resources: { TCPServerWrap: 1, TCPSocketWrap: 4 },
        gc: { observedMs: 10, full: 0 },
        http: {
          started: 30,
          finished: 30,
          active: 1,
          connections: 0,
          openConnections: 4,
          latency: eld,
          statusCodes: { 200: 30 },
          reused: 30,
          closed: 0,
          requestsPerClosedConnection: 0,
        },
      }),
    );
    if (chunk.length === 2000) {
      writeSync(fd, chunk.join('\n') + '\n');
      chunk = [];
    }
  }
  if (chunk.length > 0) writeSync(fd, chunk.join('\n') + '\n');
  closeSync(fd);
  return dir;
}

/** `hotpath report` of `dir` in a child: wall ms and peak RSS. */
function measureReport(root: string, dir: string): { ms: number; maxRssMb: number; ok: boolean } {
  const script = `const { readRunDir } = await import(${JSON.stringify(join(root, 'dist/src/profile/read-run.js'))});
const { writeReports } = await import(${JSON.stringify(join(root, 'dist/src/report/write-reports.js'))});
const t = performance.now();
await writeReports(${JSON.stringify(dir)}, { run: await readRunDir(${JSON.stringify(dir)}) });
process.stdout.write(JSON.stringify({ ms: performance.now() - t, maxRss: process.resourceUsage().maxRSS }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) return { ms: 0, maxRssMb: 0, ok: false };
  const m = JSON.parse(r.stdout) as { ms: number; maxRss: number };
  return { ms: Math.round(m.ms), maxRssMb: Math.round(m.maxRss / 1024), ok: true };
}

async function run(ctx: BenchContext): Promise<string> {
  const sizes = ctx.quick ? [150_000] : [150_000, 500_000];
  const rows: string[] = [];
  for (const samples of sizes) {
    ctx.log(`readers: a ${samples}-sample telemetry file`);
    const dir = longTelemetryRun(join(ctx.scratch, `long-${samples}`), samples);
    const mb = Math.round(statSync(join(dir, 'telemetry.ndjson')).size / 1048576);
    const m = measureReport(ctx.root, dir);
    rows.push(
      `| ${samples.toLocaleString('en-US')} | ${mb} MB | ${m.ok ? `${m.ms} ms` : 'failed'} | ${m.ok ? `${m.maxRssMb} MB` : '–'} | ${m.ok ? (m.maxRssMb / mb).toFixed(1) : '–'} |`,
    );
  }
  const cases = ctx.quick ? 300 : 5000;
  ctx.log(`readers: ${cases} fuzz cases`);
  const scratch = join(ctx.scratch, 'fuzz');
  mkdirSync(scratch, { recursive: true });
  let maxMs = 0,
    maxRss = 0,
    coded = 0,
    ok = 0;
  const start = performance.now();
  const problems = await fuzzRunDir({
    source: realRunDir(scratch),
    scratch,
    seeds: Array.from({ length: cases }, (_, i) => 1_000_000 + i),
    maxCaseMs: 30_000,
    onCase: (o) => {
      maxMs = Math.max(maxMs, o.ms);
      maxRss = Math.max(maxRss, process.memoryUsage().rss);
      if (o.code === 0) ok++;
      else coded++;
    },
  });
  const secs = (performance.now() - start) / 1000;
  return [
    '## readers: long runs and damaged run directories',
    '',
    '`hotpath report` of a long run (one target thread sampled every 10 ms, as `--interval 10`; read, analyzed, three reports written) in a child process:',
    '',
    '| samples | telemetry.ndjson | report | peak RSS | RSS / file size |',
    '|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `Fuzzing the readers (benchmarks/readers.bench.ts, seeds 1000000+): ${cases} damaged copies of a real run directory in ${secs.toFixed(0)} s; ` +
      `${ok} commands ended in a report or export, ${coded} in a coded error; slowest command ${maxMs} ms; peak RSS ${Math.round(maxRss / 1048576)} MB; ` +
      `**${problems.length} problems** (uncoded errors, writes outside the directory, slow cases).`,
    ...problems.slice(0, 10).map((p) => `- seed ${p.seed} ${p.command}: ${p.problem} (${p.mutations.join('; ')})`),
    '',
  ].join('\n');
}

export const readersBench: BenchSuite = { name: 'readers', run };
