// Overhead benchmark: what watching a server costs it. One CPU-heavy server (JSON of ~5 KB
// plus sha256 per request) under the same closed-model load (hotpath's engine, 1 worker)
// for every variant: no tool at all, `hotpath run` with telemetry only, `hotpath run` with
// CPU profiling, clinic doctor, clinic flame and 0x. Throughput is reported as a ratio to
// the plain server, measured in the same round; variants are interleaved round by round so
// the machine's noise spreads evenly. The target is pinned to CPU 0, the load to CPU 1.
// Also: the time from the end of load until the tool's results are written.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext, BenchSuite } from './suite.js';

const CONNECTIONS = 50;

interface Outcome {
  reqPerSec: number;
  /** End of load → the tool exited with its results written, ms. */
  toResultsMs?: number;
}

interface Variant {
  name: string;
  /** Runs once with `seconds` of load; undefined when the tool is missing. */
  run(seconds: number): Promise<Outcome>;
}

interface LoadJson { requests: { perSecond: number }; end: number }

/** Runs a shell command with a hard timeout; resolves with stdout and the exit time. */
function sh(cmd: string, cwd: string, timeoutS: number): Promise<{ stdout: string; code: number | null; endedAt: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('timeout', ['-k', '5', String(timeoutS), 'bash', '-c', cmd], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d; });
    child.stderr.on('data', (d: Buffer) => { stderr = (stderr + d).slice(-4000); });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) process.stderr.write(`bench: overhead: \`${cmd.slice(0, 120)}\` exited ${code}\n${stderr}\n`);
      resolve({ stdout, code, endedAt: Date.now() });
    });
  });
}

function variants(ctx: BenchContext): Variant[] {
  const node = process.execPath;
  const cli = join(ctx.root, 'dist', 'src', 'cli', 'main.js');
  const server = join(ctx.root, 'dist', 'benchmarks', 'servers', 'overhead-server.js');
  const scratch = join(ctx.scratch, 'overhead');
  mkdirSync(scratch, { recursive: true });
  const loadFlags = (s: number) => `-w 1 -c ${CONNECTIONS} -d ${s}`;
  const loadCmd = (port: string, s: number, out: string) => `taskset -c 1 ${node} ${cli} load http://127.0.0.1:${port}/ ${loadFlags(s)} --json > ${out}`;
  const readLoad = (file: string): LoadJson => JSON.parse(readFileSync(file, 'utf8')) as LoadJson;
  let n = 0;

  const plain: Variant = {
    name: 'plain (no tool)',
    async run(s) {
      const out = join(scratch, `plain-${++n}.json`);
      // The server prints its port; the load starts once it is known, then the server is stopped.
      const script = `taskset -c 0 ${node} ${server} 0 > ${out}.port & pid=$!; ` +
        `for i in $(seq 100); do grep -q listening ${out}.port 2>/dev/null && break; sleep 0.05; done; ` +
        `port=$(sed -n 's/listening //p' ${out}.port); ${loadCmd('$port', s, out)}; kill $pid; wait $pid 2>/dev/null; true`;
      await sh(script, scratch, s + 60);
      return { reqPerSec: readLoad(out).requests.perSecond };
    },
  };

  const hotpath = (profile: boolean): Variant => ({
    name: profile ? 'hotpath run (telemetry + CPU profile)' : 'hotpath run --no-profile (telemetry)',
    async run(s) {
      const cmd = `taskset -c 1 ${node} ${cli} run ${loadFlags(s)} ${profile ? '' : '--no-profile'} --json --out ${join(scratch, 'runs')} -- taskset -c 0 ${node} ${server} 0 2>/dev/null`;
      const r = await sh(cmd, scratch, s + 90);
      const report = JSON.parse(r.stdout) as { load: LoadJson };
      return { reqPerSec: report.load.requests.perSecond, toResultsMs: r.endedAt - report.load.end };
    },
  });

  const external = (name: string, bin: string, args: (out: string, s: number) => string): Variant | undefined => {
    const path = join(ctx.toolsBin, bin);
    if (!existsSync(path)) return undefined;
    return {
      name,
      async run(s) {
        const out = join(scratch, `${bin}-${++n}.json`);
        // CI=1: clinic otherwise stops at its usage-statistics question and exits without running.
        const r = await sh(`CI=1 NO_INSIGHT=1 taskset -c 0 ${path} ${args(out, s)} -- ${node} ${server} 0 > /dev/null 2>&1`, scratch, s + 180);
        const load = readLoad(out);
        return { reqPerSec: load.requests.perSecond, toResultsMs: r.endedAt - load.end };
      },
    };
  };
  // clinic and 0x run the load themselves once the port opens (--on-port), then stop the
  // server and build their report; $PORT is theirs to fill in.
  const onPort = (out: string, s: number) => `--on-port '${loadCmd('$PORT', s, out)}'`;
  return [
    plain,
    hotpath(false),
    hotpath(true),
    external('clinic doctor', 'clinic', (out, s) => `doctor --no-open ${onPort(out, s)}`),
    external('clinic flame', 'clinic', (out, s) => `flame --no-open ${onPort(out, s)}`),
    external('0x', '0x', (out, s) => `--output-dir ${join(scratch, `0x-${n}`)} ${onPort(out, s)}`),
  ].filter((v): v is Variant => v !== undefined);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

export const overheadBench: BenchSuite = {
  name: 'overhead',
  async run(ctx) {
    const seconds = ctx.quick ? 3 : 10;
    const rounds = ctx.quick ? 1 : 3;
    const list = variants(ctx);
    const ratios = new Map<string, number[]>(list.map((v) => [v.name, []]));
    const rates = new Map<string, number[]>(list.map((v) => [v.name, []]));
    const toResults = new Map<string, number[]>(list.map((v) => [v.name, []]));
    for (let round = 1; round <= rounds; round++) {
      let plainRate = NaN;
      for (const v of list) {
        ctx.log(`overhead: ${v.name} (round ${round}/${rounds})`);
        try {
          const o = await v.run(seconds);
          if (v === list[0]) plainRate = o.reqPerSec;
          rates.get(v.name)?.push(o.reqPerSec);
          ratios.get(v.name)?.push(o.reqPerSec / plainRate);
          if (o.toResultsMs !== undefined) toResults.get(v.name)?.push(o.toResultsMs);
        } catch (err) {
          ctx.log(`overhead: ${v.name} failed: ${(err as Error).message}`);
        }
      }
    }
    const rows = list.map((v) => {
      const r = rates.get(v.name) ?? [];
      const q = ratios.get(v.name) ?? [];
      const t = toResults.get(v.name) ?? [];
      return `| ${v.name} | ${r.length ? fmt(median(r)) : 'failed'} | ${q.length ? fmt(median(q), 3) : '–'} | ${t.length ? `${fmt(median(t) / 1000, 2)} s` : '–'} |`;
    });
    return [
      '## Overhead: hotpath run against clinic and 0x',
      '',
      `A server that JSON-serializes ~5 KB and sha256-hashes it per request (benchmarks/servers/overhead-server.ts),`,
      `pinned to CPU 0; the same closed-model load for every variant (hotpath's engine, 1 worker, ${CONNECTIONS} connections,`,
      `${seconds} s) on CPU 1. ${rounds} round(s), variants interleaved within each round; medians. "Ratio" is throughput`,
      'relative to the plain server measured in the same round. "End of load → results" runs until the tool has written',
      'everything (for hotpath: meta.json, load.json, profiles, report.json and report.html) and exited.',
      'Targets for hotpath: ratio ≥ 0.97 with telemetry only, ≥ 0.92 with CPU profiling, results within 1 s.',
      '',
      '| variant | req/s | ratio to plain | end of load → results |',
      '|---|---|---|---|',
      ...rows,
      '',
    ].join('\n');
  },
};
