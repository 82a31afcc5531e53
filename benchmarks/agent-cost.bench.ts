// Agent cost per request: the CPU the overhead benchmark's server (JSON of ~5 KB plus sha256
// per request) spends per request with the agent loaded, relative to the same server without
// it. Sequential runs on the shared VM drift by ±30 %, so each variant is measured in a pair
// *at the same time* as a plain server: both share CPU 0, each is driven by its own load
// process (hotpath's engine, 1 worker, on CPU 1), and the ratio of their CPU per request
// (user + system of all the server's threads, from /proc) is the agent's cost. The plain/plain
// pair calibrates what "no difference" looks like. Rounds alternate which server starts first.
// Also, in isolation: the agent's per-request and per-emitter paths in ns. Feeds docs/agent.md.
import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext, BenchSuite } from './suite.js';
import { median } from './median.js';
import { processCpuMs, threadCpuMs, type ThreadCpuMs } from './proc-cpu.js';
import { tmpdir } from 'node:os';
import { defaultCpuIntervalUs } from '../src/run/cpu-interval.js';
import { DEFAULT_DURATION_S } from '../src/load/load-options.js';

/** In-process: the agent's per-request and per-emitter paths in isolation, ns per operation. */
const MICRO = `
const dc = require('node:diagnostics_channel');
const http = require('node:http');
const { EventEmitter } = require('node:events');
const start = dc.channel('http.server.request.start');
const finish = dc.channel('http.server.response.finish');
const N = 200000;
const server = http.createServer().listen(0, '127.0.0.1', () => {
  const sockets = Array.from({ length: 25 }, () => new EventEmitter());
  const requests = () => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) {
      const request = {}, response = { statusCode: 200 }, socket = sockets[i % 25];
      start.publish({ request, response, socket, server });
      finish.publish({ request, response, socket, server });
    }
    return Number(process.hrtime.bigint() - t0) / N;
  };
  const emitters = () => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) { const e = new EventEmitter(); e.on('x', requests); e.once('y', requests); }
    return Number(process.hrtime.bigint() - t0) / N;
  };
  const best = (fn) => { fn(); return Math.min(fn(), fn(), fn()); };
  process.send([best(requests), best(emitters)]);
  server.close();
});
`;

interface Variant {
  name: string;
  agent: boolean;
  config?: Record<string, unknown>;
  profile?: boolean;
  nodeFlags?: string[];
}
const PLAIN: Variant = { name: 'no agent', agent: false };
/** hotpath run's default CPU interval for its default 10 s load (src/run/cpu-interval.ts). */
const RUN_DEFAULT_US = defaultCpuIntervalUs(DEFAULT_DURATION_S, false);
const cpuProfFlags = (us: number): string[] => ['--cpu-prof', '--cpu-prof-interval', String(us), '--cpu-prof-dir', tmpdir()];
const cpuProf = (us: number): Variant => ({
  name: `no agent, node --cpu-prof at ${us / 1000} ms`,
  agent: false,
  nodeFlags: cpuProfFlags(us),
});
/**
 * The agent's telemetry with V8's profiler started by node instead of the agent: set against the
 * agent's own profile at that interval, what the agent's way of profiling (an inspector session
 * from its worker, started after the warm-up) costs beyond `--cpu-prof` under the same telemetry.
 */
const agentWithCpuProf = (us: number): Variant => ({
  name: `agent, telemetry + growth hooks, node --cpu-prof at ${us / 1000} ms`,
  agent: true,
  config: { hooks: true },
  nodeFlags: cpuProfFlags(us),
});
const VARIANTS: Variant[] = [
  PLAIN,
  { name: 'agent, telemetry only (hooks off)', agent: true, config: { hooks: false } },
  { name: 'agent, telemetry + growth hooks (default)', agent: true, config: { hooks: true } },
  { name: 'agent, + CPU profile (1 ms)', agent: true, config: { hooks: true, cpuSamplingIntervalUs: 1000, profile: true }, profile: true },
  cpuProf(1000),
  agentWithCpuProf(1000),
  {
    name: `agent, + CPU profile (${RUN_DEFAULT_US / 1000} ms, the default of a 10 s run)`,
    agent: true,
    config: { hooks: true, cpuSamplingIntervalUs: RUN_DEFAULT_US, profile: true },
    profile: true,
  },
  cpuProf(RUN_DEFAULT_US),
  agentWithCpuProf(RUN_DEFAULT_US),
];

/** A Unix socket standing in for the CLI: reads and drops telemetry, can send control. */
class Sink {
  readonly conns = new Set<net.Socket>();
  private readonly server = net.createServer((c) => {
    this.conns.add(c);
    c.on('close', () => this.conns.delete(c))
      .on('error', () => {})
      .resume();
  });
  constructor(readonly path: string) {}
  listen(): Promise<void> {
    return new Promise((r) => this.server.listen(this.path, r));
  }
  control(cmd: string): void {
    for (const c of this.conns) c.write(`{"v":1,"type":"control","cmd":"${cmd}","seq":1}\n`);
  }
  close(): void {
    for (const c of this.conns) c.destroy();
    this.server.close();
  }
}

interface Server {
  child: ChildProcess;
  port: number;
  sink: Sink;
}

/** The environment of a server under variant `v`: the agent preloaded as `hotpath run` does, talking to `sink`. */
function agentEnv(ctx: BenchContext, v: Variant, sink: Sink): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  if (!v.agent) return env;
  env.NODE_OPTIONS = `--require "${join(ctx.root, 'dist', 'agent', 'hotpath-agent.cjs')}"`;
  env.HOTPATH_SOCKET = sink.path;
  env.HOTPATH_RUN_DIR = ctx.scratch;
  env.HOTPATH_AGENT_CONFIG = JSON.stringify(v.config ?? {});
  return env;
}

async function startServer(ctx: BenchContext, v: Variant, tag: string): Promise<Server> {
  const sink = new Sink(join(ctx.scratch, `agent-cost-${tag}.sock`));
  await sink.listen();
  const env = agentEnv(ctx, v, sink);
  const server = join(ctx.root, 'dist', 'benchmarks', 'servers', 'overhead-server.js');
  const child = spawn('taskset', ['-c', '0', process.execPath, ...(v.nodeFlags ?? []), server, '0'], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', () => reject(new Error('overhead server exited at start')));
    child.stdout!.on('data', (d: Buffer) => {
      const m = /listening (\d+)/.exec(String(d));
      if (m) resolve(Number(m[1]));
    });
  });
  return { child, port, sink };
}

export function load(ctx: BenchContext, port: number, seconds: number, connections: number): Promise<number> {
  const cli = join(ctx.root, 'dist', 'src', 'cli', 'main.js');
  return new Promise((resolve, reject) => {
    const p = spawn(
      'taskset',
      [
        '-c',
        '1',
        process.execPath,
        cli,
        'load',
        `http://127.0.0.1:${port}/`,
        '-c',
        String(connections),
        '-w',
        '1',
        '-d',
        String(seconds),
        '--json',
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    p.stdout!.on('data', (d: Buffer) => {
      out += d;
    });
    p.on('close', () => {
      try {
        resolve((JSON.parse(out) as { requests: { total: number } }).requests.total);
      } catch (err) {
        reject(err);
      }
    });
  });
}

/** One server's round: CPU µs per request (all threads, /proc stat) and its threads' µs per request by role (schedstat). */
interface Round {
  us: number;
  threads: ThreadCpuMs;
}

/** One round of a pair: both servers under load at the same time. */
async function pairRound(ctx: BenchContext, a: Variant, b: Variant, seconds: number, bFirst: boolean): Promise<[Round, Round]> {
  const servers: Server[] = [];
  try {
    for (const [v, tag] of bFirst
      ? ([
          [b, 'b'],
          [a, 'a'],
        ] as const)
      : ([
          [a, 'a'],
          [b, 'b'],
        ] as const))
      servers.push(await startServer(ctx, v, tag));
    if (bFirst) servers.reverse();
    await Promise.all(servers.map((s) => load(ctx, s.port, 1, 10))); // warm-up: JIT, connections, agent worker started
    [a, b].forEach((v, i) => {
      if (v.profile) servers[i].sink.control('profile-start');
    });
    const c0 = servers.map((s) => processCpuMs(s.child.pid!));
    const t0 = servers.map((s) => threadCpuMs(s.child.pid!));
    const served = await Promise.all(servers.map((s) => load(ctx, s.port, seconds, 25)));
    const c1 = servers.map((s) => processCpuMs(s.child.pid!));
    const t1 = servers.map((s) => threadCpuMs(s.child.pid!));
    const perRequest = (i: number, role: keyof ThreadCpuMs): number => ((t1[i][role] - t0[i][role]) * 1000) / served[i];
    return [0, 1].map((i) => ({
      us: ((c1[i] - c0[i]) * 1000) / served[i],
      threads: { main: perRequest(i, 'main'), profiler: perRequest(i, 'profiler'), other: perRequest(i, 'other') },
    })) as [Round, Round];
  } finally {
    for (const s of servers) {
      s.child.kill('SIGKILL');
      s.sink.close();
    }
  }
}

async function micro(ctx: BenchContext, v: Variant): Promise<[number, number]> {
  const sink = new Sink(join(ctx.scratch, 'agent-cost-micro.sock'));
  await sink.listen();
  const file = join(ctx.scratch, 'agent-cost-micro.cjs');
  writeFileSync(file, MICRO);
  const env = agentEnv(ctx, v, sink);
  const child = spawn(process.execPath, [file], { env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    return await new Promise<[number, number]>((resolve) => child.once('message', (m) => resolve(m as [number, number])));
  } finally {
    child.kill('SIGKILL');
    sink.close();
  }
}

const fmt = (xs: number[]): string => xs.map((x) => x.toFixed(3)).join(', ');
const fmtUs = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;

export const agentCostBench: BenchSuite = {
  name: 'agent-cost',
  async run(ctx) {
    const seconds = ctx.quick ? 3 : 6;
    const rounds = ctx.quick ? 2 : 4;
    const microRows: string[] = [];
    for (const v of VARIANTS.slice(0, 3)) {
      const [req, em] = await micro(ctx, v);
      microRows.push(`| ${v.name} | ${req.toFixed(0)} | ${em.toFixed(0)} |`);
      ctx.log(`agent-cost micro: ${v.name}: ${req.toFixed(0)} ns/request, ${em.toFixed(0)} ns/emitter`);
    }
    const rows: string[] = [];
    for (const v of VARIANTS) {
      const ratios: number[] = [];
      const plainUs: number[] = [];
      const extra: Record<keyof ThreadCpuMs, number[]> = { main: [], profiler: [], other: [] };
      for (let r = 0; r < rounds; r++) {
        const [ra, rb] = await pairRound(ctx, PLAIN, v, seconds, r % 2 === 1);
        const [a, b] = [ra.us, rb.us];
        ratios.push(b / a);
        plainUs.push(a);
        for (const role of ['main', 'profiler', 'other'] as const) extra[role].push(rb.threads[role] - ra.threads[role]);
        ctx.log(
          `agent-cost ${v.name} round ${r + 1}: plain ${a.toFixed(1)} µs/request, variant ${b.toFixed(1)}, ratio ${(b / a).toFixed(3)}; ` +
            `variant - plain by thread: main ${fmtUs(rb.threads.main - ra.threads.main)}, profiler ${fmtUs(rb.threads.profiler - ra.threads.profiler)}, other ${fmtUs(rb.threads.other - ra.threads.other)} µs/request`,
        );
      }
      ratios.sort((x, y) => x - y);
      const m = median(ratios);
      const base = median(plainUs);
      rows.push(
        `| ${v.name} | ${m.toFixed(3)} | [${fmt(ratios)}] | ${base.toFixed(1)} | ${v === PLAIN ? '–' : fmtUs((m - 1) * base)} | ${fmtUs(median(extra.main))} / ${fmtUs(median(extra.profiler))} / ${fmtUs(median(extra.other))} |`,
      );
    }
    return [
      '## Agent cost per request',
      '',
      `Server CPU per request with the agent, relative to the same server without it, measured in pairs at the same time: the overhead benchmark's server (JSON of ~5 KB + sha256 per request), two instances sharing CPU 0, each driven by its own load (hotpath's engine, 1 worker, 25 connections, ${seconds} s after 1 s of warm-up) on CPU 1. CPU is user + system of all the server's threads from /proc; ${rounds} rounds per pair, alternating which server starts first; median ratio and all rounds. "no agent" is the plain/plain calibration. The agent talks to a socket that only reads, as under \`hotpath run\` (default config: 100 ms interval; the profile is started by control after the warm-up at the interval named, with the config's \`profile\` set as \`hotpath run\` sets it, so V8's profiler is primed at listen). "node --cpu-prof" rows are V8's profiler without the agent at that interval: the floor of any CPU profile at that rate; the "telemetry + growth hooks, node --cpu-prof" rows put the same profiler under the agent's telemetry, so the agent's own profile at that interval against them is what its way of profiling costs beyond \`--cpu-prof\`. The last column splits the variant's extra CPU per request by thread (on-CPU time from each thread's schedstat, variant minus plain in the same round, median): the target's main thread, V8's profiler thread (\`v8:ProfEvntProc\`), and all the others (the agent worker, V8's compiler and GC threads, libuv's pool).`,
      '',
      '| variant | CPU per request vs plain (median) | rounds | plain µs / request | agent µs / request | by thread: main / V8 profiler / others, µs / request (median) |',
      '|---|---|---|---|---|---|',
      ...rows,
      '',
      'In isolation (one process, best of 3 × 200,000): publishing `http.server.request.start` + `http.server.response.finish` for one request over 25 keep-alive sockets, and `new EventEmitter()` + `on` + `once`, ns per operation.',
      '',
      '| variant | request path ns | emitter path ns |',
      '|---|---|---|',
      ...microRows,
      '',
    ].join('\n');
  },
};
