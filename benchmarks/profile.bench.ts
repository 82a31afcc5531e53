// The profile model's budget: a 60 s CPU profile at 1 ms (60k samples over 5,000 nodes,
// stacks up to 40 deep, app/deps/core/native frames) must build, attribute and rank in well
// under 100 ms (the whole analysis has 1 s). Each step is reported next to JSON.parse of the
// same file, the cost nobody can avoid, as a ratio; the exports are measured the same way.

import { loadavg } from 'node:os';
import type { BenchContext, BenchSuite } from './suite.js';
import type { CpuProfile } from '../src/profile/cpu-profile.js';
import { buildCallTree } from '../src/profile/build-call-tree.js';
import { hotspots } from '../src/profile/hotspots.js';
import { workBreakdown } from '../src/profile/work-breakdown.js';
import { cpuStackSamples } from '../src/profile/stack-samples.js';
import { toPprof } from '../src/report/export/pprof.js';
import { toFolded } from '../src/report/export/folded.js';
import { toSpeedscope } from '../src/report/export/speedscope.js';
import { seededRandom } from '../test/fixtures/telemetry/seeded-random.js';

const BUDGET_MS = 100;
const CWD = '/srv/bench-app';

function callFrame(f: number) {
  const kind = f % 4;
  const url =
    kind === 0
      ? `file://${CWD}/src/mod${f % 97}.js`
      : kind === 1
        ? `file://${CWD}/node_modules/dep${f % 31}/index.js`
        : kind === 2
          ? `node:internal/mod${f % 13}`
          : '';
  const name = kind === 3 ? (f % 8 === 3 ? `RegExp: ^a${f}` : `native${f}`) : `fn${f}`;
  return { functionName: name, scriptId: url ? String(f % 500) : '0', url, lineNumber: url ? f % 400 : -1, columnNumber: url ? 4 : -1 };
}

/** 60 s at ~1 ms: 60k samples over `nodes` nodes, skewed so a few stacks are hot. */
export function sixtySecondProfile(nodes = 5000, samples = 60_000): CpuProfile {
  const rand = seededRandom(11); // the same profile every run
  const out: CpuProfile['nodes'] = [{ id: 1, callFrame: callFrame(0), children: [] }];
  out[0].callFrame = { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 };
  const depth = [0];
  for (let i = 1; i < nodes; i++) {
    let parent = rand() < 0.75 ? Math.max(0, i - 1 - Math.floor(rand() * Math.min(i, 6))) : Math.floor(rand() * i);
    if (depth[parent] >= 40 || out[parent].callFrame.url === '') parent = Math.floor(rand() * Math.min(i, 40));
    if (out[parent].callFrame.url === '' && parent !== 0) parent = 0;
    out.push({ id: i + 1, callFrame: callFrame(Math.floor(rand() ** 2 * 1200) + 1), children: [] });
    out[parent].children!.push(i + 1);
    depth.push(depth[parent] + 1);
  }
  const ids: number[] = [];
  const dts: number[] = [];
  for (let s = 0; s < samples; s++) {
    ids.push(2 + Math.floor(rand() ** 3 * (nodes - 1)));
    dts.push(900 + Math.floor(rand() * 250));
  }
  return { nodes: out, startTime: 0, endTime: dts.reduce((a, b) => a + b, 0), samples: ids, timeDeltas: dts };
}

/** Median after two warm-up calls (the JIT's first pass is reported separately as "first call"). */
function median(fn: () => unknown, runs: number): number {
  fn();
  fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

export const profileBench: BenchSuite = {
  name: 'profile',
  async run(ctx: BenchContext): Promise<string> {
    const text = JSON.stringify(sixtySecondProfile());
    const runs = ctx.quick ? 5 : 15;
    const profile = JSON.parse(text) as CpuProfile;
    const opts = { cwd: CWD, sourceMaps: false };
    // The analysis builds one tree per run in a fresh process: the first, cold call matters too.
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const coldTree = buildCallTree(profile, opts);
    hotspots(coldTree, { limit: 50 })
      .slice(0, 5)
      .forEach((h) => workBreakdown(coldTree, h.frame));
    const cold = performance.now() - t0;
    const coldCpu = process.cpuUsage(c0);
    const coldCpuMs = (coldCpu.user + coldCpu.system) / 1000;
    const parse = median(() => JSON.parse(text), runs);
    const build = median(() => buildCallTree(profile, opts), runs);
    const tree = buildCallTree(profile, opts);
    const rank = median(() => hotspots(tree, { limit: 50 }), runs);
    const top = hotspots(tree, { limit: 5, kinds: ['app'] });
    const explain = median(() => top.forEach((h) => workBreakdown(tree, h.frame)), runs);
    const model = build + rank + explain;
    const samples = cpuStackSamples(profile, opts);
    const stacks = median(() => cpuStackSamples(profile, opts), runs);
    const pprof = median(() => toPprof(samples), runs);
    const folded = median(() => toFolded(samples), runs);
    const speedscope = median(() => JSON.stringify(toSpeedscope(samples, { name: 'cpu', exporter: 'bench' })), runs);
    ctx.log(
      `profile: build ${build.toFixed(1)} ms, rank ${rank.toFixed(1)} ms, explain ${explain.toFixed(1)} ms (JSON.parse ${parse.toFixed(1)} ms)`,
    );
    const row = (what: string, ms: number) => `| ${what} | ${ms.toFixed(1)} | ${(ms / parse).toFixed(2)}× |`;
    return [
      '## profile: call-tree model and exports on a 60 s profile',
      '',
      `A synthetic 60 s CPU profile at ~1 ms: ${profile.samples.length.toLocaleString('en-US')} samples, ${profile.nodes.length.toLocaleString('en-US')} nodes,`,
      `${(text.length / 1e6).toFixed(1)} MB of JSON, stacks up to 40 deep over app, node_modules, node: and native frames.`,
      `Median of ${runs} runs. Ratios are against \`JSON.parse\` of the same file, the floor every tool pays.`,
      '',
      '| step | ms | vs JSON.parse |',
      '|---|---:|---:|',
      row('JSON.parse of the .cpuprofile (reference)', parse),
      row('buildCallTree (intern, classify, weigh, merge, lay out)', build),
      row('hotspots (attributed self, total once per sample), top 50', rank),
      row('work breakdown + recursion of the top 5 app functions', explain),
      row('**model total (build + attribute + rank + explain)**', model),
      row('model total, first call in the process (cold JIT)', cold),
      row('the same first call, CPU time of this thread (load-independent)', coldCpuMs),
      row('stack samples for the exports', stacks),
      row('pprof (encode + gzip)', pprof),
      row('folded stacks', folded),
      row('speedscope JSON', speedscope),
      '',
      `Budget: the model total must stay under ${BUDGET_MS} ms: **${model < BUDGET_MS ? 'met' : 'MISSED'}** (${model.toFixed(1)} ms warm; cold ${cold.toFixed(1)} ms wall, ${coldCpuMs.toFixed(1)} ms CPU).`,
      `Machine load average during the run: ${loadavg()[0].toFixed(1)} (shared machine; figures scale with it).`,
      '',
    ].join('\n');
  },
};
