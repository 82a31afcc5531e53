// `hotpath run --native`: the target runs with V8's perf map (--perf-basic-prof-only-functions,
// --interpreted-frames-native-stack) and Linux perf records its processes during the load
// window only. After the agents wrote their profiles, the samples replace the main thread's CPU
// profile (kernel, libuv, V8 C++ and JS frames in one stack; the inspector's is kept beside it
// as cpu-<pid>-<tid>.inspector.cpuprofile), the other threads go to native-<pid>-threads.cpuprofile,
// and native.json says what was recorded. The perf map files the target wrote are removed at the
// end on every path (Ctrl-C, a crash, hotpath exiting). Where perf cannot record, the run goes on
// without it, and says so once, with the fix (HOTPATH_ERR_NATIVE_UNAVAILABLE).
//
//   target listens ── perf attaches ── load starts (window opens) ── load ends: events off
//     ── agents write profiles ── SIGINT ── perf script ── samples of the window only
//     ── native-profile.ts ── cpu-<pid>-0.cpuprofile ── maps removed

import { existsSync, rmSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ErrorCode } from '../errors.js';
import type { AgentPeer } from './agent-server.js';
import { processesSeen } from './run-meta.js';
import type { RunMeta } from '../run-dir/schema.js';
import { profileFileName } from '../run-dir/schema.js';
import { parseCpuProfile, type CpuProfile } from '../profile/cpu-profile.js';
import { NativeProcessBuilder, type NativeProcessProfiles } from '../native/native-profile.js';
import { findPerf, perfScript, PerfRecorder, type PerfUnavailable } from '../native/perf-recorder.js';
import { PerfMap } from '../native/perf-map.js';
import { demangleProfiles } from '../native/demangle-profile.js';

/** The V8 flags that make the target write /tmp/perf-<pid>.map (all supported Node majors need both). */
export const PERF_MAP_FLAGS = ['--perf-basic-prof-only-functions', '--interpreted-frames-native-stack'] as const;

/**
 * perf's sampling rate. 999 Hz: about the inspector's 1 ms interval, so a few seconds of load
 * give thousands of stacks, at an overhead measured in docs/benchmarks.md (native suite);
 * an odd rate keeps perf's timer out of step with the app's own millisecond timers.
 */
export const NATIVE_RATE_HZ = 999;

export const NATIVE_UNAVAILABLE: ErrorCode = 'HOTPATH_ERR_NATIVE_UNAVAILABLE';

export const NATIVE_FILE = 'native.json';

/** How long perf may take to attach before the load starts anyway (its first moments then go unrecorded). */
const ATTACH_WAIT_MS = 15_000;

/**
 * The main threads perf records: the processes serving the driven port, and the cluster workers
 * of a serving primary that have not listened yet (a worker's agent says hello before its server
 * listens; on a busy machine the second worker can listen seconds after the first).
 */
export function nativeTargets(peers: readonly AgentPeer[], port: number | undefined): number[] {
  const seen = processesSeen(peers, port).filter((p) => p.threadId === 0);
  const serving = new Set(seen.filter((p) => p.isTarget).map((p) => p.pid));
  return seen
    .filter((p) => serving.has(p.pid) || (p.clusterWorkerId !== undefined && p.ppid !== undefined && serving.has(p.ppid)))
    .map((p) => p.pid);
}

/** Where V8 writes its perf map (fixed in V8). */
export function perfMapPath(pid: number): string {
  return `/tmp/perf-${pid}.map`;
}

export class NativeRecording {
  private readonly perf?: string;
  private recorder?: PerfRecorder;
  private stopped?: Promise<PerfUnavailable | undefined>;
  private unavailable?: PerfUnavailable;
  private pids: number[] = [];
  private startUs = 0;
  private endUs = 0;
  private readonly mapPids = new Set<number>();
  private readonly onExit = () => this.removeMaps();

  private warnings: string[] = [];

  constructor(
    env: NodeJS.ProcessEnv,
    private readonly say: (message: string) => void,
  ) {
    const found = findPerf(env);
    if ('path' in found) this.perf = found.path;
    else this.refuse(found);
    process.on('exit', this.onExit);
  }

  /** False when perf cannot be used at all: the target then runs without the perf map. */
  get usable(): boolean {
    return this.perf !== undefined;
  }

  /** The target's environment: the perf map flags added to its NODE_OPTIONS when perf is there. */
  targetEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    if (!this.usable) return env;
    const own = env.NODE_OPTIONS?.trim();
    return { ...env, NODE_OPTIONS: own ? `${own} ${PERF_MAP_FLAGS.join(' ')}` : PERF_MAP_FLAGS.join(' ') };
  }

  /** A process that may have written a perf map (removed at the end). */
  seen(pid: number): void {
    if (this.usable) this.mapPids.add(pid);
  }

  /**
   * The target listens: perf attaches to these processes before the load, so that the load
   * window loses nothing to perf's start (a second or more on a busy machine).
   */
  async attach(pids: readonly number[], dir: string): Promise<void> {
    if (!this.perf || this.recorder || pids.length === 0) return;
    this.pids = [...new Set(pids)];
    for (const p of this.pids) this.seen(p);
    this.recorder = PerfRecorder.attach(this.perf, { pids: this.pids, rateHz: NATIVE_RATE_HZ, file: join(dir, 'perf.data') });
    const failure = await this.recorder.ready(ATTACH_WAIT_MS);
    if (failure) this.refuse(failure);
    else this.say(`native: perf attached to pid ${this.pids.join(', ')}, records at ${NATIVE_RATE_HZ} Hz during the load`);
  }

  /** Load starts: the window whose samples are kept opens. */
  enable(): void {
    if (!this.recorder || this.startUs > 0) return;
    this.startUs = nowUs();
  }

  /** Load ends (or the run is cut short): perf's events off. */
  disable(): void {
    if (!this.recorder || this.startUs === 0 || this.endUs > 0) return;
    this.endUs = nowUs();
    this.recorder.command('disable');
  }

  /** perf stops and writes perf.data (before the target is stopped: perf's end is then its own doing). */
  async stop(): Promise<void> {
    if (!this.recorder) return;
    if (!this.stopped) {
      this.disable();
      this.stopped = this.recorder.stop();
    }
    await this.stopped;
  }

  /** Second Ctrl-C, hotpath exiting: perf killed, maps removed, synchronously. */
  killNow(): void {
    this.recorder?.killNow();
    this.removeMaps();
  }

  /**
   * After the agents wrote their profiles and meta.json's profile list is known: the native
   * profiles written, meta.profiles updated, native.json written. Never throws: a failure is a warning.
   */
  async merge(dir: string, meta: RunMeta): Promise<void> {
    if (!this.recorder || !this.perf) return;
    await this.stop();
    const failure = await this.stopped;
    const data = join(dir, 'perf.data');
    try {
      if (failure || this.unavailable || this.startUs === 0) {
        if (failure) this.refuse(failure);
        return;
      }
      // Every process's builder is ready before perf script runs: its samples stream through them.
      const builders: NativeProcessBuilder[] = [];
      for (const pid of this.pids) {
        const inspector = await readInspectorProfile(join(dir, profileFileName('cpu', pid, 0)));
        builders.push(
          new NativeProcessBuilder(pid, {
            startUs: this.startUs,
            endUs: this.endUs,
            periodUs: 1e6 / NATIVE_RATE_HZ,
            ...(inspector ? { inspector } : {}),
          }),
        );
      }
      // The maps are still there (removed at close): JS frames named by their newest entries.
      const maps = new Map<number, PerfMap | undefined>();
      const mapOf = (pid: number) => {
        if (!maps.has(pid)) maps.set(pid, this.mapPids.has(pid) ? PerfMap.read(perfMapPath(pid)) : undefined);
        return maps.get(pid);
      };
      await perfScript(
        this.perf,
        data,
        (r) => {
          for (const b of builders) b.add(r);
        },
        mapOf,
      );
      const results = builders.map((b) => b.result());
      // Named as an imported perf script is (a perf without a demangler leaves C++ names mangled).
      await demangleProfiles(results.flatMap((r) => [r.main, r.threads].filter((p): p is CpuProfile => p !== undefined)));
      const summary = [];
      for (const r of results) summary.push(await this.mergeProcess(dir, meta, r));
      await writeFile(
        join(dir, NATIVE_FILE),
        JSON.stringify({ rateHz: NATIVE_RATE_HZ, flags: PERF_MAP_FLAGS, processes: summary }, null, 2) + '\n',
      );
    } catch (err) {
      // "no sample header" included: perf recorded nothing (the target idle, or gone at once).
      this.warnings.push(`native: the perf samples could not be read, the run keeps the inspector's profiles: ${(err as Error).message}`);
    } finally {
      await rm(data, { force: true });
      await rm(`${data}.old`, { force: true });
    }
  }

  private async mergeProcess(dir: string, meta: RunMeta, p: NativeProcessProfiles) {
    const pid = p.pid;
    const file = profileFileName('cpu', pid, 0);
    const summary = {
      pid,
      mainThreadSamples: p.mainSamples,
      jsSamples: p.jsSamples,
      ...(p.inspector ? { fromInspector: p.inspector } : {}),
      otherThreads: p.threadSamples,
      profile: undefined as string | undefined,
      threadsProfile: undefined as string | undefined,
    };
    if (p.main) {
      if (existsSync(join(dir, file))) await rename(join(dir, file), join(dir, file.replace(/\.cpuprofile$/, '.inspector.cpuprofile')));
      await writeFile(join(dir, file), JSON.stringify(p.main));
      // perf's clock is CLOCK_MONOTONIC: placed on the epoch by the offset between the two now.
      const offsetMs = Date.now() - nowUs() / 1000;
      const entry = {
        kind: 'cpu' as const,
        pid,
        threadId: 0,
        file,
        start: p.main.startTime / 1000 + offsetMs,
        end: p.main.endTime / 1000 + offsetMs,
      };
      meta.profiles = [entry, ...meta.profiles.filter((e) => e.file !== file)];
      summary.profile = file;
      if (p.jsSamples === 0)
        this.warnings.push(
          `native: pid ${pid}'s samples have no JS frame: its perf map ${perfMapPath(pid)} was not written (NODE_OPTIONS replaced by the launcher?)`,
        );
    } else {
      this.warnings.push(`native: perf took no sample of pid ${pid}'s main thread during the load`);
    }
    if (p.threads) {
      summary.threadsProfile = `native-${pid}-threads.cpuprofile`;
      await writeFile(join(dir, summary.threadsProfile), JSON.stringify(p.threads));
    }
    return summary;
  }

  /** The warnings not yet taken (for meta.json). */
  takeWarnings(): string[] {
    const w = this.warnings;
    this.warnings = [];
    return w;
  }

  /** Removes the perf maps of every process seen; safe to call more than once. */
  removeMaps(): void {
    for (const pid of this.mapPids) {
      try {
        rmSync(perfMapPath(pid), { force: true });
      } catch {
        /* another user's file, or gone */
      }
    }
  }

  /** The end of the run: maps removed, the exit hook dropped. */
  close(): void {
    this.removeMaps();
    process.off('exit', this.onExit);
  }

  /** perf cannot be used: said once, on the terminal and in meta.json's warnings. */
  private refuse(why: PerfUnavailable): void {
    if (this.unavailable) return;
    this.unavailable = why;
    const message = `${NATIVE_UNAVAILABLE}: --native: ${why.reason}; the run goes on without native frames. Fix: ${why.fix}`;
    this.warnings.push(message);
    this.say(message);
  }
}

/** The agent's inspector profile of the main thread, when it wrote one that parses. */
async function readInspectorProfile(path: string): Promise<CpuProfile | undefined> {
  try {
    return parseCpuProfile(await readFile(path, 'utf8'), path);
  } catch {
    return undefined;
  }
}

function nowUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}
