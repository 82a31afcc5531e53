// The cost of `hotpath run --native`: the overhead benchmark's server (JSON of ~5 KB + sha256
// per request) with V8's perf map flags, then also recorded by `perf record -g -k mono` at
// several rates, against the same server without either, measured in pairs at the same time
// (the method of agent-cost.bench.ts: both servers share CPU 0, each driven by its own load on
// CPU 1, so the machine's drift hits both). Per pair: the server's CPU per request and its
// throughput relative to the plain one, and perf's own CPU per request of the recorded server
// (perf runs unpinned: it is work the machine does for the recording). Feeds docs/run.md,
// Native stacks, and the rate in src/run/native-recording.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext, BenchSuite } from './suite.js';
import { median } from './median.js';
import { processCpuMs } from './proc-cpu.js';
import { load } from './agent-cost.bench.js';
import { PERF_MAP_FLAGS } from '../src/run/native-recording.js';
import { findPerf, PerfRecorder } from '../src/native/perf-recorder.js';

interface Variant {
  name: string;
  flags: boolean;
  rateHz?: number;
}
const PLAIN: Variant = { name: 'plain', flags: false };
const VARIANTS: Variant[] = [
  PLAIN,
  { name: 'perf map flags only', flags: true },
  { name: 'flags + perf record -g at 99 Hz', flags: true, rateHz: 99 },
  { name: 'flags + perf record -g at 499 Hz', flags: true, rateHz: 499 },
  { name: 'flags + perf record -g at 999 Hz (--native)', flags: true, rateHz: 999 },
];

interface Server {
  child: ChildProcess;
  port: number;
}

async function startServer(ctx: BenchContext, v: Variant): Promise<Server> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  if (v.flags) env.NODE_OPTIONS = PERF_MAP_FLAGS.join(' ');
  const server = join(ctx.root, 'dist', 'benchmarks', 'servers', 'overhead-server.js');
  const child = spawn('taskset', ['-c', '0', process.execPath, server, '0'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', () => reject(new Error('overhead server exited at start')));
    child.stdout!.on('data', (d: Buffer) => {
      const m = /listening (\d+)/.exec(String(d));
      if (m) resolve(Number(m[1]));
    });
  });
  return { child, port };
}

interface PairResult {
  cpu: [number, number];
  served: [number, number];
  perfUs: number;
}

/** Both servers under load at the same time; perf records the second one when the variant says so. */
async function pairRound(ctx: BenchContext, perfPath: string, v: Variant, seconds: number, vFirst: boolean): Promise<PairResult> {
  const servers: Server[] = [];
  let perf: PerfRecorder | undefined;
  const data = join(ctx.scratch, 'native-bench.data');
  try {
    if (vFirst) {
      servers[1] = await startServer(ctx, v);
      servers[0] = await startServer(ctx, PLAIN);
    } else {
      servers[0] = await startServer(ctx, PLAIN);
      servers[1] = await startServer(ctx, v);
    }
    await Promise.all(servers.map((s) => load(ctx, s.port, 1, 10))); // warm-up: JIT, connections, perf map filled
    if (v.rateHz) {
      // As `run --native` does: attached before the measured load, recording once it acks.
      perf = PerfRecorder.attach(perfPath, { pids: [servers[1].child.pid!], rateHz: v.rateHz, file: data });
      const failure = await perf.ready(30_000);
      if (failure) throw new Error(`perf: ${failure.reason}`);
    }
    const perf0 = perf ? processCpuMs(perf.pid) : 0;
    const c0 = servers.map((s) => processCpuMs(s.child.pid!));
    const served = (await Promise.all(servers.map((s) => load(ctx, s.port, seconds, 25)))) as [number, number];
    const c1 = servers.map((s) => processCpuMs(s.child.pid!));
    perf?.command('disable');
    const perfUs = perf ? ((processCpuMs(perf.pid) - perf0) * 1000) / served[1] : 0;
    return { cpu: [0, 1].map((i) => ((c1[i] - c0[i]) * 1000) / served[i]) as [number, number], served, perfUs };
  } finally {
    await perf?.stop();
    for (const s of servers) s.child.kill('SIGKILL');
    for (const s of servers) if (s.child.pid) rmSync(`/tmp/perf-${s.child.pid}.map`, { force: true });
    rmSync(data, { force: true });
  }
}

const fmt = (xs: number[]): string => xs.map((x) => x.toFixed(3)).join(', ');

export const nativeBench: BenchSuite = {
  name: 'native',
  async run(ctx) {
    const found = findPerf(process.env);
    if (!('path' in found)) return `## native: the cost of run --native (perf)\n\nNot measured: ${found.reason}.\n`;
    const seconds = ctx.quick ? 3 : 6;
    const rounds = ctx.quick ? 2 : 4;
    const rows: string[] = [];
    for (const v of VARIANTS) {
      const cpu: number[] = [];
      const rps: number[] = [];
      const perfUs: number[] = [];
      const plainUs: number[] = [];
      for (let r = 0; r < rounds; r++) {
        const p = await pairRound(ctx, found.path, v, seconds, r % 2 === 1);
        cpu.push(p.cpu[1] / p.cpu[0]);
        rps.push(p.served[1] / p.served[0]);
        perfUs.push(p.perfUs);
        plainUs.push(p.cpu[0]);
        ctx.log(
          `native ${v.name} round ${r + 1}: CPU/request ratio ${(p.cpu[1] / p.cpu[0]).toFixed(3)}, throughput ratio ${(p.served[1] / p.served[0]).toFixed(3)}, perf ${p.perfUs.toFixed(1)} µs/request`,
        );
      }
      cpu.sort((a, b) => a - b);
      rps.sort((a, b) => a - b);
      rows.push(
        `| ${v.name} | ${median(cpu).toFixed(3)} | [${fmt(cpu)}] | ${median(rps).toFixed(3)} | ${v.rateHz ? median(perfUs).toFixed(1) : '–'} | ${median(plainUs).toFixed(1)} |`,
      );
    }
    return [
      '## native: the cost of run --native (perf)',
      '',
      `The overhead benchmark's server (JSON of ~5 KB + sha256 per request) with V8's perf map flags (\`${PERF_MAP_FLAGS.join(' ')}\`), and also recorded by \`perf record -g -k mono -p <pid>\` (attached before the measured load, as \`run --native\` does), against the same server without either, in pairs at the same time: both on CPU 0, each driven by its own load (hotpath's engine, 1 worker, 25 connections, ${seconds} s after 1 s of warm-up) on CPU 1; ${rounds} rounds per variant, alternating which server starts first. CPU is user + system of all the server's threads from /proc; perf's own CPU (unpinned) during the measured load is counted apart, per request of the recorded server. "plain" is the plain/plain calibration.`,
      '',
      '| variant | server CPU per request vs plain (median) | rounds | throughput vs plain (median) | perf own µs / request | plain µs / request |',
      '|---|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n');
  },
};
