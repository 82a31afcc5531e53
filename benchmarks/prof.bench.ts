// `hotpath prof` against `node --prof-process`, side by side on the same tick log: a 60 s
// `node --prof` recording (10 s in quick mode) of a server with known hot functions under
// hotpath's load on 127.0.0.1. Wall time of each (median of alternating runs, both as child
// processes); hotpath with a cold symbol cache (symbol tables read), a warm one, and the full command
// (run directory, report.html, report.md and exports). Then accuracy on the same log:
// unaccounted ticks of each, and the top-10 JS functions of --prof-process against hotpath's.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { BenchContext, BenchSuite } from './suite.js';
import { median } from './median.js';
import { recordTickLog } from '../test/e2e/helpers/prof-log.js';
import { compareTopJs, profProcessTotals } from '../src/native/compare-prof.js';
import type { ProfStatistics } from '../src/native/prof-statistics.js';

function timed(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): { ms: number; out: string } {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'ignore'] });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
  return { ms, out: r.stdout };
}

const pct = (n: number) => `${n.toFixed(1)} %`;

export const profBench: BenchSuite = {
  name: 'prof',
  async run(ctx: BenchContext): Promise<string> {
    const seconds = ctx.quick ? 10 : 60;
    const runs = ctx.quick ? 1 : 3;
    const server = join(ctx.root, 'test', 'fixtures', 'apps', 'prof-server.cjs');
    ctx.log(`prof: recording a ${seconds} s node --prof log under load`);
    const rec = await recordTickLog(server, seconds);
    const cli = join(ctx.root, 'dist', 'src', 'cli', 'main.js');
    const out = join(ctx.scratch, 'prof-runs');
    const warmCache = mkdtempSync(join(ctx.scratch, 'symcache-'));
    const env = { ...process.env, HOTPATH_SYMBOL_CACHE: warmCache };
    execFileSync(process.execPath, [cli, 'prof', '--no-report', rec.log], { env, stdio: 'ignore' }); // fills the warm cache
    const times = { theirs: [] as number[], cold: [] as number[], warm: [] as number[], full: [] as number[] };
    let theirText = '';
    let ourJson = '';
    for (let i = 0; i < runs; i++) {
      ctx.log(`prof: run ${i + 1}/${runs}`);
      const t = timed(process.execPath, ['--prof-process', rec.log], process.env, rec.dir);
      times.theirs.push(t.ms);
      theirText = t.out;
      const cold = mkdtempSync(join(ctx.scratch, 'symcold-'));
      times.cold.push(
        timed(process.execPath, [cli, 'prof', '--no-report', rec.log], { ...process.env, HOTPATH_SYMBOL_CACHE: cold }, rec.dir).ms,
      );
      rmSync(cold, { recursive: true, force: true });
      const w = timed(process.execPath, [cli, 'prof', '--no-report', '--json', rec.log], env, rec.dir);
      times.warm.push(w.ms);
      ourJson = w.out;
      times.full.push(timed(process.execPath, [cli, 'prof', '-o', out, rec.log], env, rec.dir).ms);
    }
    const [ours] = JSON.parse(ourJson) as ProfStatistics[];
    const theirTotals = profProcessTotals(theirText) ?? { ticks: 0, unaccounted: 0 };
    const cmp = compareTopJs(theirText, ours, 10, 1);
    const base = median(times.theirs);
    const row = (name: string, xs: number[]) => `| ${name} | ${Math.round(median(xs))} | ${(base / median(xs)).toFixed(1)}x |`;
    const sizeMb = statSync(rec.log).size / 1048576;
    rmSync(rec.dir, { recursive: true, force: true });
    return [
      `## prof: hotpath prof vs node --prof-process on a ${seconds} s tick log`,
      '',
      `One \`node --prof\` log of \`test/fixtures/apps/prof-server.cjs\` (${seconds} s under \`load()\` on 127.0.0.1,`,
      `${rec.requests} requests): ${sizeMb.toFixed(1)} MiB, ${ours.ticks} ticks, ${process.version}. Wall time, median of ${runs}`,
      `alternating runs, each tool a child process (startup included). Load average ${loadavg()[0].toFixed(1)} on this machine.`,
      '',
      '| command | ms | speed-up |',
      '|---|---:|---:|',
      `| node --prof-process | ${Math.round(base)} | 1.0x |`,
      row('hotpath prof --no-report, cold symbol cache (symbol tables read)', times.cold),
      row('hotpath prof --no-report, warm symbol cache', times.warm),
      row('hotpath prof (run dir, report.html/md, 3 exports), warm', times.full),
      '',
      '| accuracy on the same log | node --prof-process | hotpath prof |',
      '|---|---:|---:|',
      `| ticks | ${theirTotals.ticks} | ${ours.ticks} |`,
      `| unaccounted | ${pct((theirTotals.unaccounted * 100) / Math.max(1, theirTotals.ticks))} | ${pct((ours.unaccounted * 100) / Math.max(1, ours.ticks))} |`,
      `| top-10 JS functions differing by name or by more than 1 point | | ${cmp.mismatches.length} of ${cmp.rows.length} |`,
      '',
      'Top JS functions (share of all ticks):',
      '',
      '| function | --prof-process | hotpath |',
      '|---|---:|---:|',
      ...cmp.rows.map(
        (r) => `| \`${r.name.replace(/\|/g, '\\|')}\` | ${pct(r.theirs)} | ${r.ours === undefined ? 'missing' : pct(r.ours)} |`,
      ),
      '',
    ].join('\n');
  },
};
