// Linux perf, driven by `hotpath run --native`: finds it, attaches to the target's processes
// (`perf record -g -k mono -p <pids>`) before the load (attaching takes perf a second or more
// on a busy machine), knows through perf's control channel when it is recording, turns its
// events off when the load ends, and prints the samples (`perf script`); the caller keeps the
// samples of the load window. Not attached with events off (`-D -1`): perf 6.1 then also misses
// the mmaps of the code V8 compiles meanwhile, and the JS frames in them come out [unknown].
// When perf is missing, not permitted or not Linux, it says why and how to fix it instead of
// failing: the run goes on without native frames.
//
//   hotpath ── spawn ──> perf record --control fd:3,4 -p <pids>
//           ── fd 3: ping → ack on fd 4 (recording) ── disable (load ends)
//           ── SIGINT ──> perf.data ── spawn ──> perf script -F +pid -i perf.data ──> samples, streamed

import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { PerfSampleReader, readPerfLines, type RawSample } from './perf-script.js';
import type { PerfMap } from './perf-map.js';

/** Why perf cannot record, and what would let it. */
export interface PerfUnavailable {
  reason: string;
  fix: string;
}

/** How long perf may take to write perf.data after SIGINT before it is killed. */
const STOP_WAIT_MS = 15_000;

/** The perf executable on PATH, or why there is none to use. */
export function findPerf(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): { path: string } | PerfUnavailable {
  if (platform !== 'linux') {
    return {
      reason: `native stacks need Linux perf; this is ${platform}`,
      fix: 'run on Linux, or use `node --prof` and `hotpath prof` (docs/prof.md)',
    };
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const path = join(dir, 'perf');
    try {
      accessSync(path, constants.X_OK);
      return { path };
    } catch {
      /* not here */
    }
  }
  return {
    reason: 'perf is not installed (not found on PATH)',
    fix: 'install it: `apt-get install linux-perf` (Debian), `apt-get install linux-tools-$(uname -r)` (Ubuntu), `dnf install perf` (Fedora)',
  };
}

function paranoid(): string {
  try {
    return readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim();
  } catch {
    return '?';
  }
}

/** perf's own words turned into a reason and a fix. */
export function perfFailure(stderr: string, code: number | null): PerfUnavailable {
  const text = stderr.trim();
  if (/perf_event_paranoid|permission|not permitted|EACCES|EPERM|access to performance monitoring/i.test(text)) {
    return {
      reason: `perf is not permitted to record (kernel.perf_event_paranoid is ${paranoid()})`,
      fix: 'allow it: `sudo sysctl -w kernel.perf_event_paranoid=1` (-1 for kernel frames too), or run hotpath as root or with CAP_PERFMON',
    };
  }
  if (/perf not found for kernel|linux-tools|linux-perf/i.test(text)) {
    return {
      reason: 'the installed perf does not match the running kernel',
      fix: 'install the perf of this kernel: `apt-get install linux-perf` (Debian), `apt-get install linux-tools-$(uname -r)` (Ubuntu)',
    };
  }
  const first = text.split('\n').find((l) => l.trim() !== '' && !/^error:?$/i.test(l.trim())) ?? `exit code ${code}`;
  return { reason: `perf record failed: ${first.trim()}`, fix: 'run the same `perf record -g -p <pid>` by hand to see why' };
}

/** One `perf record` of the target's processes. */
export class PerfRecorder {
  private stderr = '';
  private exit?: { code: number | null };
  private readonly exited: Promise<void>;
  private spawnError?: Error;
  private acks = 0;
  private onAck?: () => void;

  /** perf's pid (benchmarks read its CPU time). */
  get pid(): number {
    return this.child.pid ?? 0;
  }

  private constructor(
    private readonly child: ChildProcess,
    readonly file: string,
  ) {
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (s: string) => {
      if (this.stderr.length < 64 * 1024) this.stderr += s;
    });
    child.stdio[4]?.on('data', (b: Buffer) => {
      this.acks += String(b).split('ack').length - 1;
      this.onAck?.();
    });
    child.stdio[4]?.on('error', () => {
      /* perf gone: its exit says why */
    });
    child.stdio[3]?.on('error', () => {
      /* idem */
    });
    this.exited = new Promise((resolve) => {
      child.once('error', (err) => {
        this.spawnError = err;
        this.exit ??= { code: null };
        resolve();
      });
      child.once('exit', (code) => {
        this.exit = { code };
        resolve();
      });
    });
  }

  /**
   * Attaches to `pids` to record at `rateHz` into `file` with call graphs and CLOCK_MONOTONIC
   * times (V8's clock); commands reach perf on its fd 3, acks come back on fd 4.
   */
  static attach(perf: string, o: { pids: readonly number[]; rateHz: number; file: string }): PerfRecorder {
    const args = ['record', '-F', String(o.rateHz), '-g', '-k', 'mono', '--control', 'fd:3,4', '-p', o.pids.join(','), '-o', o.file];
    const child = spawn(perf, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    return new PerfRecorder(child, o.file);
  }

  /** Waits until perf answers on its control channel (attached, ready) or ends; why it ended, if it did. */
  async ready(timeoutMs: number): Promise<PerfUnavailable | undefined> {
    this.command('ping');
    const acked = new Promise<void>((resolve) => {
      if (this.acks > 0) return resolve();
      this.onAck = () => resolve();
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      acked,
      this.exited,
      new Promise((r) => {
        timer = setTimeout(r, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    this.onAck = undefined;
    return this.failure();
  }

  /** Sends a control command (`enable`, `disable`, `ping`); ignored once perf has ended. */
  command(cmd: 'disable' | 'ping'): void {
    if (this.exit) return;
    const ctl = this.child.stdio[3] as NodeJS.WritableStream | null;
    ctl?.write(`${cmd}\n`);
  }

  /** Why recording stopped on its own before stop() (perf refused, or could not start), if it did. */
  failure(): PerfUnavailable | undefined {
    if (!this.exit) return undefined;
    if (this.spawnError)
      return { reason: `perf could not be started: ${this.spawnError.message}`, fix: 'check that perf is installed and executable' };
    return this.wrote() ? undefined : perfFailure(this.stderr, this.exit.code);
  }

  /**
   * perf ends a recording (SIGINT, or every recorded process gone) with "[ perf record: Captured
   * and wrote ... ]" and an exit code that varies by version: the written file is the proof.
   */
  private wrote(): boolean {
    return /Captured and wrote/.test(this.stderr) && existsSync(this.file);
  }

  /** Stops recording (SIGINT makes perf write perf.data); undefined when perf.data was written. */
  async stop(): Promise<PerfUnavailable | undefined> {
    if (this.exit) return this.failure();
    this.child.kill('SIGINT');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_WAIT_MS);
    await this.exited;
    clearTimeout(timer);
    // perf exits 0 on SIGINT once perf.data is complete; its "[ perf record: ...]" lines are not errors.
    return this.wrote() ? undefined : perfFailure(this.stderr, this.exitCode());
  }

  private exitCode(): number | null {
    return this.exit?.code ?? null;
  }

  /** Kills perf at once (a second Ctrl-C, hotpath exiting). */
  killNow(): void {
    if (!this.exit) this.child.kill('SIGKILL');
  }
}

/**
 * `perf script` of `file`, with the pid beside the thread id of every sample, read as it prints:
 * each sample goes to `onSample` and its text is dropped (a long recording is never held whole).
 */
export async function perfScript(
  perf: string,
  file: string,
  onSample: (r: RawSample) => void,
  maps?: (pid: number) => PerfMap | undefined,
): Promise<void> {
  const child = spawn(perf, ['script', '-F', '+pid', '-i', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (s: string) => {
    if (err.length < 16 * 1024) err += s;
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  try {
    await readPerfLines(child.stdout, new PerfSampleReader(file, onSample, maps));
  } catch (e) {
    child.kill('SIGKILL');
    await exited.catch(() => undefined);
    throw e;
  }
  const code = await exited;
  if (code !== 0) throw new Error(`perf script exited with code ${code}: ${err.trim().split('\n')[0] ?? ''}`);
}
