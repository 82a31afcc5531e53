// CPU profile (and allocation sampling) of one isolate through an inspector session: from the
// agent worker with connectToMainThread() (answers while the main thread is blocked), or
// in-thread with connect() for worker-thread targets. Writes cpu-<pid>-<tid>.cpuprofile and
// heap-<pid>-<tid>.heapprofile into the run directory and reports each with a `profile` message.
// The session is connected only while a profile runs: a connected session costs the target
// (V8 keeps inspector state for it) and, left connected at exit, makes Node print "Waiting for
// the debugger to disconnect..." into the target's stderr.
import { writeFile } from 'node:fs';
import { join } from 'node:path';
import type { Session } from 'node:inspector';
import type { ProfileMessage } from '../protocol.js';
import { epochNow } from '../clock.js';
import { profiledScripts } from './function-ranges.js';

type ProfileBody = Omit<ProfileMessage, 'v' | 'pid' | 'threadId' | 't'>;

export interface ProfilerOptions {
  runDir: string;
  pid: number;
  threadId: number;
  samplingIntervalUs: number;
  heap: boolean;
  send: (body: ProfileBody) => void;
  onError: (what: string, err: unknown) => void;
  /** Called when a profile starts (true) and once its files are written with none running (false). */
  onBusy?: (busy: boolean) => void;
  /** Called when the stop requests go to V8 (true) and when V8 has answered them all (false): the main thread may be blocked meanwhile. */
  onStopping?: (stopping: boolean) => void;
  /** URL prefix of the agent's own scripts (its bundle's directory), never asked for function ranges. */
  ownScriptsUrl?: string;
}

interface CpuProfile {
  startTime: number;
  endTime: number;
  samples?: number[];
  nodes?: { callFrame: { scriptId: string; url: string }; hitCount?: number; positionTicks?: unknown[] }[];
}
interface HeapProfile { samples?: unknown[] }

export class InspectorProfiler {
  private running: { startEpoch: number; session: Session } | undefined;
  /** Callbacks waiting for a stop in progress: a flush right after profile-stop must wait for
   *  the files (a large heap profile takes a while to serialize), or the target is stopped first. */
  private stopping: (() => void)[] | undefined;
  private windows = 0;
  /** Script ids with sampled lines in the profiles written so far (their function ranges are asked at the end). */
  readonly profiledScripts = new Set<string>();

  /** `connect` opens a new connected session (connectToMainThread() or connect()). */
  constructor(private readonly connect: () => Session, private readonly opts: ProfilerOptions) {}

  get isRunning(): boolean {
    return this.running !== undefined;
  }

  start(): void {
    if (this.running !== undefined) return;
    let s: Session;
    try {
      s = this.connect();
    } catch (err) {
      return this.opts.onError('inspector', err);
    }
    this.running = { startEpoch: epochNow(), session: s };
    this.opts.onBusy?.(true);
    const fail = (what: string) => (err: Error | null): void => { if (err) this.opts.onError(what, err); };
    s.post('Profiler.enable', fail('profiler-enable'));
    s.post('Profiler.setSamplingInterval', { interval: this.opts.samplingIntervalUs }, fail('profiler-interval'));
    s.post('Profiler.start', fail('profiler-start'));
    if (!this.opts.heap) return;
    s.post('HeapProfiler.enable', fail('heap-enable'));
    s.post('HeapProfiler.startSampling', {
      // Objects already collected are kept: allocation pressure, not only what is still alive.
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    } as object, fail('heap-start'));
  }

  /** Stops, writes and reports the running profiles; `done` runs after the files are written (or failed). */
  stop(done: () => void): void {
    const running = this.running;
    if (running === undefined) {
      if (this.stopping) this.stopping.push(done);
      else done();
      return;
    }
    this.running = undefined;
    const waiting = [done];
    this.stopping = waiting;
    const suffix = this.windows++ === 0 ? '' : `-${this.windows}`;
    let pending = this.opts.heap ? 2 : 1;
    const finish = (): void => {
      if (--pending > 0) return;
      this.stopping = undefined;
      this.opts.onBusy?.(this.running !== undefined);
      for (const cb of waiting) cb();
    };
    const session = running.session;
    // Disconnect as soon as V8 has answered every stop: the files are written without it.
    let answers = this.opts.heap ? 2 : 1;
    const answered = (): void => {
      if (--answers > 0) return;
      disconnect(session);
      this.opts.onStopping?.(false);
    };
    this.opts.onStopping?.(true);
    session.post('Profiler.stop', (err, result) => {
      answered();
      if (err || !result?.profile) {
        this.opts.onError('profiler-stop', err ?? new Error('no profile'));
        return finish();
      }
      this.writeCpu(result.profile as unknown as CpuProfile, suffix, finish);
    });
    if (!this.opts.heap) return;
    session.post('HeapProfiler.stopSampling', (err, result) => {
      answered();
      if (err || !result?.profile) {
        this.opts.onError('heap-stop', err ?? new Error('no heap profile'));
        return finish();
      }
      this.writeHeap(result.profile as unknown as HeapProfile, running.startEpoch, suffix, finish);
    });
  }

  private writeCpu(profile: CpuProfile, suffix: string, done: () => void): void {
    const { pid, threadId } = this.opts;
    const file = `cpu-${pid}-${threadId}${suffix}.cpuprofile`;
    profiledScripts(profile.nodes ?? [], this.profiledScripts, this.opts.ownScriptsUrl);
    // The profile's clock is the monotonic clock behind process.hrtime: map it to epoch ms.
    const offsetMs = epochNow() - Number(process.hrtime.bigint()) / 1e6;
    const start = profile.startTime / 1000 + offsetMs;
    const end = profile.endTime / 1000 + offsetMs;
    this.write(file, profile, done, {
      type: 'profile', kind: 'cpu', file, start, end,
      clock: { profileStartUs: profile.startTime, profileEndUs: profile.endTime },
      samples: profile.samples?.length ?? 0,
    });
  }

  private writeHeap(profile: HeapProfile, start: number, suffix: string, done: () => void): void {
    const { pid, threadId } = this.opts;
    const file = `heap-${pid}-${threadId}${suffix}.heapprofile`;
    this.write(file, profile, done, { type: 'profile', kind: 'heap', file, start, end: epochNow(), samples: profile.samples?.length ?? 0 });
  }

  private write(file: string, data: unknown, done: () => void, message: ProfileBody): void {
    let text: string;
    try {
      text = JSON.stringify(data);
    } catch (err) {
      this.opts.onError('profile-serialize', err);
      return done();
    }
    writeFile(join(this.opts.runDir, file), text, (err) => {
      if (err) this.opts.onError('profile-write', err);
      else this.opts.send(message);
      done();
    });
  }
}

/** Disconnecting stops whatever still runs in that session; it must never throw into the caller. */
export function disconnect(session: Session): void {
  try {
    session.disconnect();
  } catch {
    // Already disconnected.
  }
}
