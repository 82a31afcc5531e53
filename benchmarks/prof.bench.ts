// `hotpath prof` against `node --prof-process`, side by side on the same tick log: a 60 s
// `node --prof` recording (10 s in quick mode) of a server with known hot functions under
// hotpath's load on 127.0.0.1. Both run as child processes, in rounds that alternate them:
// wall time and CPU time (user + system of all the child's threads) of each; the speed-up is
// the median of the rounds' ratios (each round's runs are seconds apart, under about the same
// load), with their range. hotpath runs with a cold symbol cache (a fresh process and cache:
// what a user gets), a warm one, and as the full command (run directory, report.html, report.md
// and exports). Then accuracy on the same log: unaccounted ticks of each, and the top-10 JS
// functions of --prof-process against hotpath's.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { BenchContext, BenchSuite } from './suite.js';
import { median } from './median.js';
import { CLK_TCK } from './proc-cpu.js';
import { recordTickLog } from '../test/e2e/helpers/prof-log.js';
import { compareTopJs, profProcessTotals } from '../src/native/compare-prof.js';
import type { ProfStatistics } from '../src/native/prof-statistics.js';

/** User + system ms of this process's waited-for children (cutime + cstime of /proc/self/stat). */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[13]) + Number(f[14])) * 1000) / CLK_TCK;
}

interface Timed {
  ms: number;
  cpuMs: number;
  out: string;
}

function timed(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Timed {
  const cpu0 = childrenCpuMs();
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'ignore'] });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
  return { ms, cpuMs: childrenCpuMs() - cpu0, out: r.stdout };
}

const pct = (n: number) => `${n.toFixed(1)} %`;

export const profBench: BenchSuite = {
  name: 'prof',
  async run(ctx: BenchContext): Promise<string> {
    const seconds = ctx.quick ? 10 : 60;
    const runs = ctx.quick ? 1 : 9;
    const server = join(ctx.root, 'test', 'fixtures', 'apps', 'prof-server.cjs');
    ctx.log(`prof: recording a ${seconds} s node --prof log under load`);
    const rec = await recordTickLog(server, seconds);
    const cli = join(ctx.root, 'dist', 'src', 'cli', 'main.js');
    const out = join(ctx.scratch, 'prof-runs');
    const warmCache = mkdtempSync(join(ctx.scratch, 'symcache-'));
    const env = { ...process.env, HOTPATH_SYMBOL_CACHE: warmCache };
    execFileSync(process.execPath, [cli, 'prof', '--no-report', rec.log], { env, stdio: 'ignore' }); // fills the warm cache
    type Variant = 'theirs' | 'cold' | 'warm' | 'full';
    const times: Record<Variant, Timed[]> = { theirs: [], cold: [], warm: [], full: [] };
    const loads: number[] = [];
    let theirText = '';
    let ourJson = '';
    for (let i = 0; i < runs; i++) {
      ctx.log(`prof: round ${i + 1}/${runs}`);
      loads.push(loadavg()[0]);
      // Which tool starts the round alternates, so neither always runs first after a pause.
      const theirs = () => {
        const t = timed(process.execPath, ['--prof-process', rec.log], process.env, rec.dir);
        times.theirs.push(t);
        theirText = t.out;
      };
      const ours = () => {
        const cold = mkdtempSync(join(ctx.scratch, 'symcold-'));
        times.cold.push(
          timed(process.execPath, [cli, 'prof', '--no-report', rec.log], { ...process.env, HOTPATH_SYMBOL_CACHE: cold }, rec.dir),
        );
        rmSync(cold, { recursive: true, force: true });
        const w = timed(process.execPath, [cli, 'prof', '--no-report', '--json', rec.log], env, rec.dir);
        times.warm.push(w);
        ourJson = w.out;
        times.full.push(timed(process.execPath, [cli, 'prof', '-o', out, rec.log], env, rec.dir));
      };
      if (i % 2 === 0) {
        theirs();
        ours();
      } else {
        ours();
        theirs();
      }
    }
    loads.push(loadavg()[0]);
    const [ours] = JSON.parse(ourJson) as ProfStatistics[];
    const theirTotals = profProcessTotals(theirText) ?? { ticks: 0, unaccounted: 0 };
    const cmp = compareTopJs(theirText, ours, 10, 1);
    const wall = (v: Variant) => times[v].map((t) => t.ms);
    const cpu = (v: Variant) => times[v].map((t) => t.cpuMs);
    /** The rounds' ratios of --prof-process's figure to this variant's: median, and range. */
    const speedUp = (v: Variant, of: (t: Timed) => number) => {
      const ratios = times[v].map((t, i) => of(times.theirs[i]) / Math.max(1, of(t)));
      return `${median(ratios).toFixed(1)}x (${Math.min(...ratios).toFixed(1)}-${Math.max(...ratios).toFixed(1)})`;
    };
    const row = (name: string, v: Variant) =>
      `| ${name} | ${Math.round(median(wall(v)))} | ${v === 'theirs' ? '1.0x' : speedUp(v, (t) => t.ms)} | ${Math.round(median(cpu(v)))} | ${v === 'theirs' ? '1.0x' : speedUp(v, (t) => t.cpuMs)} |`;
    const sizeMb = statSync(rec.log).size / 1048576;
    rmSync(rec.dir, { recursive: true, force: true });
    return [
      `## prof: hotpath prof vs node --prof-process on a ${seconds} s tick log`,
      '',
      `One \`node --prof\` log of \`test/fixtures/apps/prof-server.cjs\` (${seconds} s under \`load()\` on 127.0.0.1,`,
      `${rec.requests} requests): ${sizeMb.toFixed(1)} MiB, ${ours.ticks} ticks, ${process.version}. ${runs} rounds, each running`,
      `\`node --prof-process\` and the three hotpath commands as child processes (startup included), alternating`,
      `which starts a round. Wall and CPU time (user + system, all threads) are medians; a speed-up is the median of the`,
      `rounds' ratios, with their range. Load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)} on this 2-core machine during the rounds.`,
      '',
      '| command | wall ms | speed-up (wall) | CPU ms | speed-up (CPU) |',
      '|---|---:|---:|---:|---:|',
      row('node --prof-process', 'theirs'),
      row('hotpath prof --no-report, cold (fresh process, symbol tables read)', 'cold'),
      row('hotpath prof --no-report, warm symbol cache', 'warm'),
      row('hotpath prof (run dir, report.html/md, 3 exports), warm', 'full'),
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
