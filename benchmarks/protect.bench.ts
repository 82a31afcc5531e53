// Protect benchmark: does hotpath/protect keep latency bounded and goodput high past
// capacity? A CPU-bound server (~2 ms per request, benchmarks/servers/protect-server.ts)
// pinned to CPU 0; its capacity measured with a closed-model run; then hotpath's open-model
// engine (CPU 1) offers 2x that rate for 20 s, once without protection and once with
// protect({ maxEventLoopDelay: 50 }), side by side in one run.
// The engine's latency histogram mixes 200s and 503s, so a light probe (50 req/s, open
// model, latency from the intended send time) runs alongside and measures successful
// requests only; both are reported.
// Connections are opened before the measured window (a warm-up, and a pre-filled probe
// pool): a busy Node server accepts about one new connection per event-loop turn, so
// connections opened mid-overload wait in the kernel's accept queue where no in-process
// guard can see them, which would measure Node's accept loop rather than the guard.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { LoadResult } from '../src/load/load-result.js';
import { load, type LoadOptions } from '../src/load/load.js';
import type { BenchContext, BenchSuite } from './suite.js';
import { median } from './median.js';
import { processCpuMs } from './proc-cpu.js';

const DELAY_MS = 50;
const PROBE_RATE = 50;
const CONNECTIONS = 100;
/** Seconds of load before the measured window: every connection is accepted by then (see below). */
const WARMUP_S = 5;
const PROBE_SOCKETS = 16;

interface Server {
  child: ChildProcess;
  port: number;
}
interface ProbeResult {
  ok: number[];
  shed: number;
  failed: number;
}
interface Outcome {
  load: LoadResult;
  probe: ProbeResult;
  stats: { served: number; status?: { shed: number } };
}

function startServer(ctx: BenchContext, mode: 'plain' | 'protect'): Promise<Server> {
  const script = join(ctx.root, 'dist', 'benchmarks', 'servers', 'protect-server.js');
  const child = spawn('taskset', ['-c', '0', process.execPath, script, '0', mode, String(DELAY_MS)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error('protect-server did not start'));
    }, 15_000);
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]) });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`protect-server exited ${code}`));
    });
  });
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null) return resolve();
    server.child.once('exit', () => resolve());
    server.child.kill();
  });
}

/** hotpath's load engine, in this process (pinned to CPU 1 with its worker thread), one worker. */
async function runLoad(url: string, options: Omit<LoadOptions, 'url'>): Promise<LoadResult> {
  return load({ url, workers: 1, ...options });
}

function get(agent: Agent, port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, timeout: 30_000 }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (d: string) => {
          body += d;
        })
        .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** Open-model probe: PROBE_RATE req/s on schedule; latency of successes from the intended send time. */
async function probe(agent: Agent, port: number, seconds: number): Promise<ProbeResult> {
  const result: ProbeResult = { ok: [], shed: 0, failed: 0 };
  const start = performance.now();
  const pending: Promise<void>[] = [];
  const total = Math.floor(seconds * PROBE_RATE);
  for (let i = 0; i < total; i++) {
    const intended = start + (i * 1000) / PROBE_RATE;
    const wait = intended - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      get(agent, port, '/work').then(
        (r) => {
          if (r.status === 200) result.ok.push(performance.now() - intended);
          else result.shed++;
        },
        () => {
          result.failed++;
        },
      ),
    );
  }
  await Promise.all(pending);
  return result;
}

async function variant(ctx: BenchContext, mode: 'plain' | 'protect', rate: number, seconds: number): Promise<Outcome> {
  const server = await startServer(ctx, mode);
  try {
    const url = `http://127.0.0.1:${server.port}/work`;
    const options = { connections: CONNECTIONS, rate: Math.round(rate), warmup: WARMUP_S, duration: seconds, timeout: 10_000 };
    const agent = new Agent({ keepAlive: true, maxSockets: PROBE_SOCKETS });
    await Promise.all(Array.from({ length: PROBE_SOCKETS }, () => get(agent, server.port, '/__stats')));
    const loadDone = runLoad(url, options);
    await new Promise((r) => setTimeout(r, WARMUP_S * 1000));
    const [result, p] = await Promise.all([loadDone, probe(agent, server.port, seconds)]);
    agent.destroy();
    const stats = JSON.parse((await get(new Agent(), server.port, '/__stats')).body) as Outcome['stats'];
    return { load: result, probe: p, stats };
  } finally {
    await stop(server);
  }
}

/**
 * One round of the guard's cost: a plain and a guarded server on CPU 0 at the same time, each
 * driven by its own closed-model load on a hello-world route; CPU per request of each (from
 * /proc). Measured in pairs because sequential runs on this shared machine drift by more than
 * the guard costs.
 */
async function helloPair(ctx: BenchContext, seconds: number): Promise<{ plainUs: number; guardedUs: number }> {
  const servers = [await startServer(ctx, 'plain'), await startServer(ctx, 'protect')];
  try {
    const hello = (s: Server, d: number) => runLoad(`http://127.0.0.1:${s.port}/hello`, { connections: 25, warmup: 0, duration: d });
    await Promise.all(servers.map((s) => hello(s, 1)));
    const cpu0 = servers.map((s) => processCpuMs(s.child.pid ?? 0));
    const results = await Promise.all(servers.map((s) => hello(s, seconds)));
    const us = servers.map((s, i) => ((processCpuMs(s.child.pid ?? 0) - cpu0[i]) * 1000) / Math.max(1, results[i].requests.total));
    return { plainUs: us[0], guardedUs: us[1] };
  } finally {
    await Promise.all(servers.map(stop));
  }
}

/** The guard's cost when not overloaded: server CPU per hello-world request with and without it, in pairs. */
async function guardCost(ctx: BenchContext): Promise<string> {
  const rounds = ctx.quick ? 1 : 5;
  const seconds = ctx.quick ? 2 : 4;
  const ratios: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const r = await helloPair(ctx, seconds);
    ratios.push(r.guardedUs / r.plainUs);
    plain.push(r.plainUs);
    ctx.log(`protect: guard cost round ${i + 1}: plain ${r.plainUs.toFixed(1)} µs/request, guarded ${r.guardedUs.toFixed(1)}`);
  }
  const m = median(ratios);
  const base = median(plain);
  return [
    'Cost when not overloaded: server CPU per request on a hello-world route (the cheapest request there is, so the',
    `guard's share is at its largest), plain and guarded servers measured in pairs at the same time on CPU 0, each under its own`,
    `closed-model load (25 connections, ${seconds} s) from CPU 1; ${rounds} round(s), median and every round.`,
    '',
    '| variant | CPU µs / request | ratio (median) | ratio per round |',
    '|---|---|---|---|',
    `| without protection | ${fmt(base, 1)} | 1.000 | |`,
    `| with protect() | ${fmt(base * m, 1)} | ${fmt(m, 3)} | ${[...ratios]
      .sort((a, b) => a - b)
      .map((x) => fmt(x, 3))
      .join(', ')} |`,
    '',
  ].join('\n');
}

async function capacity(ctx: BenchContext, seconds: number): Promise<number> {
  const server = await startServer(ctx, 'plain');
  try {
    const result = await runLoad(`http://127.0.0.1:${server.port}/work`, { connections: 8, warmup: 1, duration: seconds });
    return result.requests.perSecond;
  } finally {
    await stop(server);
  }
}

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

const fmt = (x: number, d = 0) =>
  Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : '–';
const pct = (x: number) => `${fmt(x * 100, 1)} %`;

function row(name: string, o: Outcome, cap: number): { line: string; goodput: number; p99: number } {
  const l = o.load;
  const ok = l.statusCodes['200'] ?? 0;
  const shed = l.statusCodes['503'] ?? 0;
  const goodput = ok / (l.durationMs / 1000) / cap;
  const offered = l.schedule?.intended ?? l.requests.sent;
  const p99 = percentile(o.probe.ok, 99);
  const tl = l.timeline;
  // p99 of the latest second up to `s` that completed anything (a stalled second reports 0).
  const at = (s: number) =>
    tl
      .slice(0, s)
      .reverse()
      .find((t) => t.requests > 0)?.p99 ?? NaN;
  const growth = `${fmt(at(Math.ceil(tl.length / 4)))} → ${fmt(at(Math.ceil(tl.length / 2)))} → ${fmt(at(tl.length))}`;
  const line =
    `| ${name} | ${fmt(ok / (l.durationMs / 1000))} | ${pct(goodput)} | ${fmt(p99, 1)} ms | ${fmt(l.latency.p99, 1)} ms | ${growth} | ` +
    `${pct(shed / Math.max(1, offered))} | ${fmt(l.errors.timeouts)} / ${fmt(l.errors.total)} | ${fmt(l.schedule?.dropped ?? 0)} |`;
  return { line, goodput, p99 };
}

/** Pins this process (the probe) to CPU 1, away from the server; returns the old affinity to restore. */
function pinSelf(cpus: string): string | undefined {
  try {
    const old = /: ([\d,-]+)\s*$/.exec(execFileSync('taskset', ['-pc', String(process.pid)], { encoding: 'utf8' }))?.[1];
    execFileSync('taskset', ['-apc', cpus, String(process.pid)], { stdio: 'ignore' });
    return old;
  } catch {
    return undefined;
  }
}

export const protectBench: BenchSuite = {
  name: 'protect',
  async run(ctx) {
    const old = pinSelf('1');
    try {
      return await measure(ctx);
    } finally {
      if (old !== undefined) pinSelf(old);
    }
  },
};

async function measure(ctx: BenchContext): Promise<string> {
  const loadAtStart = loadavg();
  const seconds = ctx.quick ? 5 : 20;
  ctx.log('protect: measuring capacity (closed model, 8 connections)');
  const capBefore = await capacity(ctx, ctx.quick ? 2 : 4);
  const rate = 2 * capBefore;
  ctx.log(`protect: capacity ${fmt(capBefore)} req/s; offering ${fmt(rate)} req/s for ${seconds} s without protection`);
  const plain = await variant(ctx, 'plain', rate, seconds);
  ctx.log('protect: same load with protect()');
  const guarded = await variant(ctx, 'protect', rate, seconds);
  // The machine is shared: capacity measured before and after, averaged.
  const cap = (capBefore + (await capacity(ctx, ctx.quick ? 2 : 4))) / 2;
  ctx.log(`protect: capacity before ${fmt(capBefore)}, after ${fmt(2 * cap - capBefore)} req/s`);
  const a = row('without protection', plain, cap);
  const b = row(`protect({ maxEventLoopDelay: ${DELAY_MS} })`, guarded, cap);
  ctx.log('protect: guard cost on a hello-world route');
  const cost = await guardCost(ctx);
  const bound = 2 * DELAY_MS + 2;
  const verdict =
    `Target with protection: goodput ≥ 90 % of capacity (${b.goodput >= 0.9 ? 'met' : 'missed'}: ${pct(b.goodput)}), ` +
    `successful p99 ≤ 2 × ${DELAY_MS} ms + 2 ms service = ${bound} ms (${b.p99 <= bound ? 'met' : 'missed'}: ${fmt(b.p99, 1)} ms).`;
  return [
    '## Protect: overload protection at 2x capacity',
    '',
    `Load average when the suite started: ${loadAtStart.map((x) => x.toFixed(1)).join(', ')} on ${cpus().length} CPUs (shared machine; capacity drifts).`,
    '',
    'A CPU-bound node:http server (2 ms of arithmetic per request, benchmarks/servers/protect-server.ts) pinned to',
    `CPU 0. Capacity, from closed-model runs (8 connections) before and after: **${fmt(cap)} req/s** (${fmt(capBefore)} before,`,
    `${fmt(2 * cap - capBefore)} after). hotpath's open-model engine on CPU 1 then offers **${fmt(rate)} req/s (2x the capacity`,
    `measured before) for ${seconds} s** over up to ${CONNECTIONS} connections (10 s timeout), after ${WARMUP_S} s of warm-up at the same`,
    'rate so every connection is open, once without protection and once behind `protect()`, in the same run.',
    '',
    '- Goodput: 200 responses per second as a share of capacity.',
    '- p99 successful: from a probe running alongside (50 req/s, open model, latency from the intended send time,',
    "  200s only), because the engine's histogram mixes 200s and 503s.",
    "- p99 all answers: the engine's own corrected p99 (200s and 503s); per second: its p99 at a quarter, half and",
    '  the end of the run, which shows whether latency grows.',
    '- Shed: 503s as a share of intended sends.',
    '',
    '| variant | 200/s | goodput | p99 successful (probe) | p99 all answers | p99 per second over the run, ms | shed | timeouts / errors | dropped sends |',
    '|---|---|---|---|---|---|---|---|---|',
    a.line,
    b.line,
    '',
    verdict,
    '',
    cost,
  ].join('\n');
}
