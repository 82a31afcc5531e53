// Test helper: runs the built CLI (`node dist/src/cli/main.js ...`) as a real child process
// with a hard timeout, and reads back the run directory it wrote.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunMeta } from '../../../src/run-dir/schema.js';

/** Repository root (tests run from dist/test/run/helpers). */
export const root = fileURLToPath(new URL('../../../../', import.meta.url));
export const cli = join(root, 'dist', 'src', 'cli', 'main.js');
export const apps = join(root, 'test', 'fixtures', 'apps');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Called with the child and a function that resolves once stderr contains `text`. */
  onSpawn?(child: ChildProcess, waitFor: (text: string) => Promise<void>): void;
}

export function runCli(args: string[], o: RunCliOptions = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd: o.cwd ?? root,
    env: { ...process.env, NO_COLOR: '1', ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  child.stdout.on('data', (c: Buffer) => {
    stdout += c;
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c;
    for (const w of waiters.filter((x) => stderr.includes(x.text))) w.resolve();
  });
  const waitFor = (text: string) =>
    new Promise<void>((resolve) => {
      if (stderr.includes(text)) resolve();
      else waiters.push({ text, resolve });
    });
  o.onSpawn?.(child, waitFor);
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 45_000);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** `hotpath run <args> --json -- <command>` in `cwd`: the report printed on stdout, or an error with stderr. */
export async function runReport<R>(args: string[], command: string[], cwd: string): Promise<{ report: R; stderr: string }> {
  const r = await runCli(['run', ...args, '--json', '--', ...command], { cwd, env: { PORT: '0' }, timeoutMs: 120_000 });
  try {
    return { report: JSON.parse(r.stdout) as R, stderr: r.stderr };
  } catch {
    throw new Error(`hotpath run exited ${r.code ?? r.signal} without a report\n${r.stderr}`);
  }
}

/** A fresh output directory for one test; removed by `cleanup`. */
export function tempOut(): { out: string; cleanup(): void } {
  const out = mkdtempSync(join(tmpdir(), 'hotpath-e2e-'));
  return { out, cleanup: () => rmSync(out, { recursive: true, force: true }) };
}

/** The single run directory created under `out`. */
export function onlyRunDir(out: string): string {
  const dirs = readdirSync(out);
  if (dirs.length !== 1) throw new Error(`expected one run directory in ${out}, found ${dirs.join(', ') || 'none'}`);
  return join(out, dirs[0]);
}

export function readMeta(dir: string): RunMeta {
  return JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as RunMeta;
}

/** Alive and not a zombie. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Every pid of the run (spawned, agents) and its process group: none may be alive. */
export function survivors(meta: RunMeta): number[] {
  const pids = new Set<number>(meta.processes.map((p) => p.pid));
  if (meta.spawnedPid !== undefined) pids.add(meta.spawnedPid);
  const alive = [...pids].filter(processAlive);
  if (meta.spawnedPid !== undefined) alive.push(...groupMembersOf(meta.spawnedPid));
  return [...new Set(alive)];
}

function groupMembersOf(pgid: number): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') out.push(Number(e));
    } catch {
      /* gone */
    }
  }
  return out;
}
