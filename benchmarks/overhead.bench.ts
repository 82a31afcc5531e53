// Overhead benchmark: what watching a server costs it. One CPU-heavy server (JSON of ~5 KB
// plus sha256 per request) under the same closed-model load (hotpath's engine, 1 worker)
// for every variant: no tool at all (twice: the noise floor), `hotpath run` with telemetry
// only, `hotpath run` with CPU profiling, `node --cpu-prof` at the same interval (V8's own
// cost), clinic doctor, clinic flame and 0x. Throughput is reported as a ratio to the plain
// server, measured in the same round; variants are interleaved round by round, in reverse
// order every other round, so the machine's noise and drift spread evenly. The target is pinned to CPU 0, the load to CPU 1.
// Also: the time from the end of load until the tool's results are written.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import type { BenchContext, BenchSuite } from './suite.js';
import { median } from './median.js';

import { CLK_TCK, processTicks } from './proc-cpu.js';
import { defaultCpuIntervalUs } from '../src/run/cpu-interval.js';

const CONNECTIONS = 50;
/** hotpath run's default --cpu-interval for a load of `seconds`, µs (it depends on the load's duration). */
const defaultIntervalUs = (seconds: number) => defaultCpuIntervalUs(seconds, false);
/** The reference every other variant is divided by, in the same round. */
const PLAIN = 'plain (no tool)';
/**
 * clinic and 0x write reports of tens of seconds: they run in the first rounds only
 * (HOTPATH_BENCH_EXTERNAL_ROUNDS to change it).
 */
const EXTERNAL_ROUNDS = Number(process.env.HOTPATH_BENCH_EXTERNAL_ROUNDS) || 3;
/**
 * More CPU intervals to measure beside the default, µs, comma-separated
 * (HOTPATH_BENCH_INTERVALS=2000,5000): `hotpath run --cpu-interval` and `node --cpu-prof` at each.
 */
/** HOTPATH_BENCH_VARIANTS=plain,hotpath: only the variants whose name contains one of these. */
const ONLY = (process.env.HOTPATH_BENCH_VARIANTS ?? '').split(',').filter(Boolean);
const EXTRA_INTERVALS_US = (process.env.HOTPATH_BENCH_INTERVALS ?? '')
  .split(',')
  .map(Number)
  .filter((x) => Number.isInteger(x) && x >= 100);

interface Outcome {
  reqPerSec: number;
  /** Completed requests. */
  requests: number;
  /** The measured load window, epoch ms. */
  window: { start: number; end: number };
  /** End of load → the tool exited with its results written, ms. */
  toResultsMs?: number;
}

interface Variant {
  name: string;
  /** Runs in the first `rounds` rounds only (the external tools build slow reports); default every round. */
  rounds?: number;
  /** Runs once with `seconds` of load; the server gets `marker` as its last argument. */
  run(seconds: number, marker: string): Promise<Outcome>;
}

interface LoadJson {
  requests: { perSecond: number; total: number };
  start: number;
  end: number;
}

/**
 * Watches the CPU time (user + system, all threads) of the server process, found by the
 * marker at the end of its command line, whichever tool started it, as a time series.
 * Server CPU per request over the load window is steadier than throughput on a shared
 * machine, and leaves start-up and shutdown out.
 */
function watchServerCpu(
  server: string,
  marker: string,
  exclude: readonly string[],
): { stop(window: { start: number; end: number }): number } {
  const ticks = new Map<number, number>();
  const series: { t: number; ms: number }[] = [];
  const scan = () => {
    for (const e of readdirSync('/proc')) {
      if (!/^\d+$/.test(e)) continue;
      try {
        const args = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0').filter(Boolean);
        if (args.at(-1) !== marker || !args.includes(server) || args.some((a) => exclude.some((x) => a.includes(x)))) continue;
        ticks.set(Number(e), processTicks(e));
      } catch {
        /* exited */
      }
    }
    series.push({ t: Date.now(), ms: ([...ticks.values()].reduce((a, b) => a + b, 0) * 1000) / CLK_TCK });
  };
  const timer = setInterval(scan, 100);
  scan();
  return {
    stop(window) {
      clearInterval(timer);
      const before = series.filter((x) => x.t <= window.start).at(-1) ?? series[0];
      const after = series.find((x) => x.t >= window.end) ?? series.at(-1) ?? before;
      return after.ms - before.ms;
    },
  };
}

/** Runs a shell command with a hard timeout; resolves with stdout and the exit time. */
function sh(cmd: string, cwd: string, timeoutS: number): Promise<{ stdout: string; code: number | null; endedAt: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('timeout', ['-k', '5', String(timeoutS), 'bash', '-c', cmd], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) process.stderr.write(`bench: overhead: \`${cmd.slice(0, 120)}\` exited ${code}\n${stderr}\n`);
      resolve({ stdout, code, endedAt: Date.now() });
    });
  });
}

function variants(ctx: BenchContext, seconds: number): Variant[] {
  // hotpath's default CPU interval (--cpu-interval) for this load, and V8's own profiler at it.
  const defaultUs = defaultIntervalUs(seconds);
  const node = process.execPath;
  const cli = join(ctx.root, 'dist', 'src', 'cli', 'main.js');
  const server = join(ctx.root, 'dist', 'benchmarks', 'servers', 'overhead-server.js');
  const scratch = join(ctx.scratch, 'overhead');
  mkdirSync(scratch, { recursive: true });
  const loadFlags = (s: number) => `-w 1 -c ${CONNECTIONS} --warmup 1s -d ${s}`;
  const loadCmd = (port: string, s: number, out: string) =>
    `taskset -c 1 ${node} ${cli} load http://127.0.0.1:${port}/ ${loadFlags(s)} --json > ${out}`;
  const readLoad = (file: string): LoadJson => JSON.parse(readFileSync(file, 'utf8')) as LoadJson;
  let n = 0;

  // The server without hotpath's agent, optionally with node flags of its own.
  const bare = (name: string, nodeFlags: string): Variant => ({
    name,
    async run(s, marker) {
      const out = join(scratch, `bare-${++n}.json`);
      // The server prints its port; the load starts once it is known, then the server is stopped.
      const script =
        `taskset -c 0 ${node} ${nodeFlags} ${server} 0 ${marker} > ${out}.port & pid=$!; ` +
        `for i in $(seq 100); do grep -q listening ${out}.port 2>/dev/null && break; sleep 0.05; done; ` +
        `port=$(sed -n 's/listening //p' ${out}.port); ${loadCmd('$port', s, out)}; kill $pid; wait $pid 2>/dev/null; true`;
      await sh(script, scratch, s + 60);
      const load = readLoad(out);
      return { reqPerSec: load.requests.perSecond, requests: load.requests.total, window: load };
    },
  });

  const hotpath = (profile: boolean, cpuIntervalUs?: number): Variant => ({
    name: !profile
      ? 'hotpath run --no-profile (telemetry)'
      : cpuIntervalUs === undefined
        ? `hotpath run (telemetry + CPU profile at its default, ${defaultUs / 1000} ms here)`
        : `hotpath run --cpu-interval ${cpuIntervalUs} (telemetry + CPU profile at ${cpuIntervalUs / 1000} ms)`,
    async run(s, marker) {
      const cmd = `taskset -c 1 ${node} ${cli} run ${loadFlags(s)} ${profile ? '' : '--no-profile'} ${cpuIntervalUs ? `--cpu-interval ${cpuIntervalUs}` : ''} --json --out ${join(scratch, 'runs')} -- taskset -c 0 ${node} ${server} 0 ${marker} 2>/dev/null`;
      const r = await sh(cmd, scratch, s + 90);
      const report = JSON.parse(r.stdout) as { load: LoadJson };
      return {
        reqPerSec: report.load.requests.perSecond,
        requests: report.load.requests.total,
        window: report.load,
        toResultsMs: r.endedAt - report.load.end,
      };
    },
  });

  const external = (name: string, bin: string, args: (out: string, s: number) => string): Variant | undefined => {
    const path = join(ctx.toolsBin, bin);
    if (!existsSync(path)) return undefined;
    return {
      name,
      rounds: EXTERNAL_ROUNDS,
      async run(s, marker) {
        const out = join(scratch, `${bin}-${++n}.json`);
        // CI=1: clinic otherwise stops at its usage-statistics question and exits without running.
        const r = await sh(
          `CI=1 NO_INSIGHT=1 taskset -c 0 ${path} ${args(out, s)} -- ${node} ${server} 0 ${marker} > /dev/null 2>&1`,
          scratch,
          s + 180,
        );
        const load = readLoad(out);
        return { reqPerSec: load.requests.perSecond, requests: load.requests.total, window: load, toResultsMs: r.endedAt - load.end };
      },
    };
  };
  // clinic and 0x run the load themselves once the port opens (--on-port), then stop the
  // server and build their report; $PORT is theirs to fill in.
  const onPort = (out: string, s: number) => `--on-port '${loadCmd('$PORT', s, out)}'`;
  return [
    bare(PLAIN, ''),
    bare('plain again (the noise floor)', ''),
    hotpath(false),
    hotpath(true),
    // The 1 ms of earlier defaults, against V8's own profiler at 1 ms without hotpath.
    defaultUs !== 1000 ? hotpath(true, 1000) : undefined,
    bare('node --cpu-prof at 1 ms (no hotpath)', `--cpu-prof --cpu-prof-interval 1000 --cpu-prof-dir ${join(scratch, 'cpu-prof')}`),
    // V8's own profiler at hotpath's default interval: the floor of a profile at that rate.
    defaultUs !== 1000
      ? bare(
          `node --cpu-prof at ${defaultUs / 1000} ms (no hotpath)`,
          `--cpu-prof --cpu-prof-interval ${defaultUs} --cpu-prof-dir ${join(scratch, 'cpu-prof')}`,
        )
      : undefined,
    ...EXTRA_INTERVALS_US.filter((us) => us !== defaultUs && us !== 1000).flatMap((us) => [
      hotpath(true, us),
      bare(
        `node --cpu-prof at ${us / 1000} ms (no hotpath)`,
        `--cpu-prof --cpu-prof-interval ${us} --cpu-prof-dir ${join(scratch, 'cpu-prof')}`,
      ),
    ]),
    external('clinic doctor', 'clinic', (out, s) => `doctor --no-open ${onPort(out, s)}`),
    external('clinic flame', 'clinic', (out, s) => `flame --no-open ${onPort(out, s)}`),
    external('0x', '0x', (out, s) => `--output-dir ${join(scratch, `0x-${n}`)} ${onPort(out, s)}`),
  ].filter((v): v is Variant => v !== undefined && (ONLY.length === 0 || ONLY.some((o) => v.name.includes(o))));
}

/**
 * Issue 21's targets, relative to the peers measured in the same rounds (medians of the ratios):
 * --no-profile at most clinic doctor's loss; the default at most the lower of clinic flame's and
 * 0x's, and at most `node --cpu-prof` at the same interval + 2 points.
 */
function relativeTargets(tally: (prefix: string) => Tally | undefined, defaultUs: number): string[] {
  const loss = (t: Tally | undefined) => (t && t.ratios.length ? 1 - median(t.ratios) : undefined);
  const pct = (x: number | undefined) => (x === undefined ? 'not measured' : `${fmt(x * 100, 1)} %`);
  const telemetry = loss(tally('hotpath run --no-profile'));
  const profiled = loss(tally('hotpath run (telemetry + CPU'));
  const doctor = loss(tally('clinic doctor'));
  const flame = loss(tally('clinic flame'));
  const ox = loss(tally('0x'));
  const cpuProf = loss(tally(`node --cpu-prof at ${defaultUs / 1000} ms`));
  const peers = [flame, ox].filter((x): x is number => x !== undefined);
  const judge = (x: number | undefined, limit: number | undefined) =>
    x === undefined || limit === undefined ? 'cannot tell' : x <= limit + 1e-9 ? 'met' : 'missed';
  return [
    `- relative (issue 21): --no-profile ${pct(telemetry)} against clinic doctor ${pct(doctor)}: ${judge(telemetry, doctor)}; ` +
      `the default ${pct(profiled)} against the lower of clinic flame and 0x ${pct(peers.length ? Math.min(...peers) : undefined)}: ` +
      `${judge(profiled, peers.length ? Math.min(...peers) : undefined)}, and against node --cpu-prof at ${defaultUs / 1000} ms + 2 points ` +
      `${pct(cpuProf === undefined ? undefined : cpuProf + 0.02)}: ${judge(profiled, cpuProf === undefined ? undefined : cpuProf + 0.02)}.`,
  ];
}

const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

interface Tally {
  rates: number[];
  ratios: number[];
  cpuPerReq: number[];
  cpuRatios: number[];
  toResults: number[];
}

function row(name: string, t: Tally): string {
  const m = (xs: number[], d: number, suffix = '') => (xs.length ? `${fmt(median(xs), d)}${suffix}` : '–');
  const all = (xs: number[]) =>
    xs.length
      ? [...xs]
          .sort((a, b) => a - b)
          .map((x) => fmt(x, 3))
          .join(', ')
      : '–';
  return (
    `| ${name} | ${t.rates.length ? fmt(median(t.rates)) : 'failed'} | ${m(t.ratios, 3)} | ${all(t.ratios)} | ${m(t.cpuPerReq, 1)} | ${m(t.cpuRatios, 3)} | ${all(t.cpuRatios)} | ` +
    `${t.toResults.length ? `${fmt(median(t.toResults) / 1000, 2)} s` : '–'} |`
  );
}

/** The value below which a share `q` of the sorted values lies (nearest rank). */
function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))];
}

/**
 * Target lines: median throughput loss and time to results against the issue's targets. When
 * the middle half of the rounds spreads wider than the target, the median cannot tell it:
 * inconclusive; when the median misses but the best quarter of the rounds meets it, the miss
 * is within the noise.
 */
function verdict(name: string, t: Tally | undefined, maxLoss: number): string {
  if (!t || t.ratios.length === 0) return `- ${name}: no measurement.`;
  const loss = 1 - median(t.ratios);
  const lo = quantile(t.ratios, 0.25);
  const hi = quantile(t.ratios, 0.75);
  const toResults = t.toResults.length ? median(t.toResults) / 1000 : NaN;
  // Met on the median; within the noise when at least a quarter of the rounds meet it.
  // Ratios have three digits: 0.970 is a 3 % loss, not 3.00000001 %.
  const within = (x: number) => x <= maxLoss + 1e-9;
  const lossVerdict =
    hi - lo > maxLoss
      ? `inconclusive: the middle half of the rounds spans ${fmt(lo, 3)} to ${fmt(hi, 3)}, wider than the target`
      : within(loss)
        ? 'met'
        : within(1 - hi)
          ? 'missed on the median, met within the noise'
          : 'missed';
  return (
    `- ${name}: throughput loss ${fmt(loss * 100, 1)} % (middle half of the rounds ${fmt((1 - hi) * 100, 1)} to ${fmt((1 - lo) * 100, 1)} %; ` +
    `target ≤ ${fmt(maxLoss * 100, 0)} %: ${lossVerdict}), results ${fmt(toResults, 2)} s after the end of load (target ≤ 1 s: ${toResults <= 1 ? 'met' : 'missed'}).`
  );
}

export const overheadBench: BenchSuite = {
  name: 'overhead',
  async run(ctx) {
    const seconds = ctx.quick ? 3 : 5;
    const rounds = ctx.quick ? 1 : Number(process.env.HOTPATH_BENCH_ROUNDS) || 10;
    const list = variants(ctx, seconds);
    const defaultUs = defaultIntervalUs(seconds);
    const server = join(ctx.root, 'dist', 'benchmarks', 'servers', 'overhead-server.js');
    const exclude = [join(ctx.root, 'dist', 'src', 'cli', 'main.js'), '/.bin/', 'clinic/bin', '0x/cmd'];
    const tallies = new Map<string, Tally>(
      list.map((v) => [v.name, { rates: [], ratios: [], cpuPerReq: [], cpuRatios: [], toResults: [] }]),
    );
    for (let round = 1; round <= rounds; round++) {
      // Every other round runs the variants in reverse order, so none always follows another.
      const order = list.filter((v) => round <= (v.rounds ?? rounds));
      if (round % 2 === 0) order.reverse();
      const results = new Map<string, { rate: number; cpu: number; toResultsMs?: number }>();
      for (const v of order) {
        ctx.log(`overhead: ${v.name} (round ${round}/${rounds})`);
        const marker = `hotpath-overhead-${round}-${list.indexOf(v)}`;
        const watch = watchServerCpu(server, marker, exclude);
        try {
          const o = await v.run(seconds, marker);
          const cpu = (watch.stop(o.window) * 1000) / Math.max(1, o.requests);
          results.set(v.name, { rate: o.reqPerSec, cpu, toResultsMs: o.toResultsMs });
        } catch (err) {
          watch.stop({ start: 0, end: 0 });
          ctx.log(`overhead: ${v.name} failed: ${(err as Error).message}`);
        }
      }
      const plain = results.get(PLAIN);
      for (const [name, r] of results) {
        const t = tallies.get(name) as Tally;
        t.rates.push(r.rate);
        t.cpuPerReq.push(r.cpu);
        if (plain && name !== PLAIN) {
          t.ratios.push(r.rate / plain.rate);
          t.cpuRatios.push(r.cpu / plain.cpu);
        }
        if (r.toResultsMs !== undefined) t.toResults.push(r.toResultsMs);
      }
    }
    const tally = (prefix: string) => tallies.get(list.find((v) => v.name.startsWith(prefix))?.name ?? '');
    const intro = [
      '## Overhead: hotpath run against clinic and 0x',
      '',
      'A server that JSON-serializes ~5 KB and sha256-hashes it per request (benchmarks/servers/overhead-server.ts),',
      `pinned to CPU 0; the same closed-model load for every variant (hotpath's engine, 1 worker, ${CONNECTIONS} connections,`,
      `${seconds} s after 1 s of warm-up) on CPU 1. ${rounds} round(s), variants interleaved within each round and in reverse order every other round`,
      `(clinic and 0x in the first ${EXTERNAL_ROUNDS} rounds only); medians, and every round's ratio.`,
      '"Throughput ratio" is relative to the plain server measured in the same round; "plain again" is a second',
      'plain server in the same round, so its ratios show how far two identical runs differ here. "node --cpu-prof"',
      "is V8's profiler without hotpath at the interval named: what any CPU profile at that rate costs this server.",
      '"Server CPU" is the',
      "server process's own user+system time (all its threads, from /proc, whichever tool started it) per",
      'completed request; its ratio is the CPU the tool adds to every request, measured over the load window only',
      '(sampled every 100 ms).',
      '"End of load → results" runs until the tool has written everything',
      '(for hotpath: meta.json, load.json, profiles, report.json and report.html) and exited.',
      '',
    ];
    return [
      ...intro,
      "Targets for hotpath (issue 21): `--no-profile` at most clinic doctor's loss; the default at most the lower of clinic flame's and 0x's, and at most",
      "`node --cpu-prof` at the same interval + 2 points; results within 1 s. (Issue 3's absolute targets, 3 % and 8 %, are also judged below.)",
      '',
      `Load average when the suite started: ${loadavg()
        .map((x) => x.toFixed(1))
        .join(', ')} on ${cpus().length} CPUs.`,
      '',
      '| variant | req/s | throughput ratio (median) | throughput ratio per round | server CPU µs/request | CPU ratio (median) | CPU ratio per round | end of load → results |',
      '|---|---|---|---|---|---|---|---|',
      ...list.map((v) => row(v.name, tallies.get(v.name) as Tally)),
      '',
      verdict('hotpath run --no-profile (telemetry)', tally('hotpath run --no-profile'), 0.03),
      verdict('hotpath run (telemetry + CPU profile at its default)', tally('hotpath run (telemetry + CPU'), 0.08),
      ...relativeTargets(tally, defaultUs),
      '',
    ].join('\n');
  },
};
