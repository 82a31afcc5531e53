// Agent cost per request: the CPU a small HTTP server spends per request with the agent
// loaded (telemetry only; telemetry + growth hooks; + CPU profiling at 1 ms), minus the same
// server without the agent, measured in the server itself (process.cpuUsage over a fixed
// number of keep-alive requests). Variants are interleaved round by round and the median is
// kept, so the shared machine's noise spreads evenly. Feeds docs/agent.md.
import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import * as http from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext, BenchSuite } from './suite.js';
import { median } from './median.js';

const SERVER = `
const http = require('node:http');
let cpu0;
http.createServer((req, res) => {
  if (req.url === '/start') { cpu0 = process.cpuUsage(); return res.end('0'); }
  if (req.url === '/cpu') { const c = process.cpuUsage(cpu0); return res.end(String(c.user + c.system)); }
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ ok: true, items: [1, 2, 3] }));
}).listen(0, '127.0.0.1', function () { process.send?.(this.address().port); });
`;

/** In-process: the agent's per-request and per-emitter paths in isolation, ns per operation. */
const MICRO = `
const dc = require('node:diagnostics_channel');
const http = require('node:http');
const { EventEmitter } = require('node:events');
const start = dc.channel('http.server.request.start');
const finish = dc.channel('http.server.response.finish');
const N = 200000;
const server = http.createServer().listen(0, '127.0.0.1', () => {
  const socket = new EventEmitter();
  const requests = () => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) {
      const request = {}, response = { statusCode: 200 };
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

interface Variant { name: string; agent: boolean; config?: Record<string, unknown>; profile?: boolean }
const VARIANTS: Variant[] = [
  { name: 'no agent', agent: false },
  { name: 'agent, telemetry only', agent: true, config: { hooks: false } },
  { name: 'agent, telemetry + growth hooks', agent: true, config: { hooks: true } },
  { name: 'agent, + CPU profile (1 ms)', agent: true, config: { hooks: true }, profile: true },
];

function get(agent: http.Agent, port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => { body += d; }).on('end', () => resolve(body));
    }).on('error', reject);
  });
}

async function drive(port: number, n: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  await get(agent, port, '/warm');
  for (let i = 0; i < 500; i++) await get(agent, port, '/');
  await get(agent, port, '/start');
  let left = n;
  await Promise.all(Array.from({ length: 8 }, async () => { while (left-- > 0) await get(agent, port, '/'); }));
  const cpuUs = Number(await get(agent, port, '/cpu'));
  agent.destroy();
  return cpuUs / n;
}

async function once(ctx: BenchContext, v: Variant, n: number, socketPath: string, controls: Set<net.Socket>): Promise<number> {
  const file = join(ctx.scratch, 'agent-cost-server.cjs');
  writeFileSync(file, SERVER);
  const child: ChildProcess = spawn(process.execPath, [file], { env: agentEnv(ctx, v, socketPath), stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    const port = await new Promise<number>((resolve) => child.once('message', (p) => resolve(Number(p))));
    if (v.profile) {
      await new Promise((r) => setTimeout(r, 300));
      for (const c of controls) c.write('{"v":1,"type":"control","cmd":"profile-start"}\n');
    }
    return await drive(port, n);
  } finally {
    child.kill('SIGKILL');
  }
}

async function micro(ctx: BenchContext, v: Variant, socketPath: string): Promise<[number, number]> {
  const file = join(ctx.scratch, 'agent-cost-micro.cjs');
  writeFileSync(file, MICRO);
  const child = spawn(process.execPath, [file], { env: agentEnv(ctx, v, socketPath), stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    return await new Promise<[number, number]>((resolve) => child.once('message', (m) => resolve(m as [number, number])));
  } finally {
    child.kill('SIGKILL');
  }
}

function agentEnv(ctx: BenchContext, v: Variant, socketPath: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  if (v.agent) {
    env.NODE_OPTIONS = `--require "${join(ctx.root, 'dist', 'agent', 'hotpath-agent.cjs')}"`;
    env.HOTPATH_SOCKET = socketPath;
    env.HOTPATH_RUN_DIR = ctx.scratch;
    env.HOTPATH_AGENT_CONFIG = JSON.stringify(v.config ?? {});
  }
  return env;
}

export const agentCostBench: BenchSuite = {
  name: 'agent-cost',
  async run(ctx) {
    const n = ctx.quick ? 3000 : 15000;
    const rounds = ctx.quick ? 3 : 5;
    const socketPath = join(ctx.scratch, 'agent-cost.sock');
    const controls = new Set<net.Socket>();
    const sink = net.createServer((c) => { controls.add(c); c.on('close', () => controls.delete(c)); c.on('error', () => {}); c.resume(); });
    await new Promise<void>((r) => sink.listen(socketPath, r));
    const results = new Map<string, number[]>(VARIANTS.map((v) => [v.name, []]));
    const microRows: string[] = [];
    try {
      for (const v of VARIANTS.slice(0, 3)) {
        const [req, em] = await micro(ctx, v, socketPath);
        microRows.push(`| ${v.name} | ${req.toFixed(0)} | ${em.toFixed(0)} |`);
        ctx.log(`agent-cost micro: ${v.name}: ${req.toFixed(0)} ns/request, ${em.toFixed(0)} ns/emitter`);
      }
      for (let r = 0; r < rounds; r++) {
        for (const v of VARIANTS) {
          const us = await once(ctx, v, n, socketPath, controls);
          results.get(v.name)!.push(us);
          ctx.log(`agent-cost round ${r + 1}: ${v.name}: ${us.toFixed(1)} µs CPU/request`);
        }
      }
    } finally {
      sink.close();
    }
    const base = median(results.get('no agent')!);
    const rows = VARIANTS.map((v) => {
      const m = median(results.get(v.name)!);
      return `| ${v.name} | ${m.toFixed(1)} | ${v.agent ? `${(m - base >= 0 ? '+' : '')}${(m - base).toFixed(1)}` : '–'} |`;
    });
    return [
      '## Agent cost per request',
      '',
      `Server CPU time per request (user + system, µs; median of ${rounds} interleaved rounds of ${n} keep-alive requests, 8 at a time) for a small JSON server, with and without the agent. Includes the server's own work; the difference is the agent's cost.`,
      '',
      '| variant | CPU µs / request | vs no agent |',
      '|---|---|---|',
      ...rows,
      '',
      'In isolation (one process, best of 3 × 200,000): publishing `http.server.request.start` + `http.server.response.finish` for one request, and `new EventEmitter()` + `on` + `once`, ns per operation.',
      '',
      '| variant | request path ns | emitter path ns |',
      '|---|---|---|',
      ...microRows,
      '',
    ].join('\n');
  },
};
