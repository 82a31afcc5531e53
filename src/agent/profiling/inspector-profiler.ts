// CPU profile (and allocation sampling) of one isolate through an inspector session: from the
// agent worker with connectToMainThread() (answers while the main thread is blocked), or
// in-thread with connect() for worker-thread targets. Writes cpu-<pid>-<tid>.cpuprofile and
// heap-<pid>-<tid>.heapprofile into the run directory and reports each with a `profile` message.
// With a `retainedFrom` time, the heap sampler is restarted then without keeping collected
// objects, and left running past profile-stop until the post-load GC: that second profile,
// heap-retained-<pid>-<tid>.heapprofile, holds what was allocated in the last part of the window
// and is still alive once the load is over (a leak's growth, without the garbage).
//
//   profile-start ──── allocations (collected kept) ──── switch ──── retained ──── profile-stop ── flush: GC ── stop
//                      heap-<pid>-<tid>.heapprofile ◀────┘                                                     └─▶ heap-retained-...
// The session is connected only while a profile runs: a connected session costs the target
// (V8 keeps inspector state for it) and, left connected at exit, makes Node print "Waiting for
// the debugger to disconnect..." into the target's stderr.
import { join } from 'node:path';
import type { Session } from 'node:inspector';
import type { ProfileMessage } from '../protocol.js';
import { epochNow } from '../clock.js';
import { profiledScripts } from './function-ranges.js';
import { writeFileSpared } from '../fd-reserve.js';
import { endProfilerSession } from './coverage-hold.js';

type ProfileBody = Omit<ProfileMessage, 'v' | 'pid' | 'threadId' | 't'>;

export interface ProfilerOptions {
  runDir: string;
  pid: number;
  threadId: number;
  samplingIntervalUs: number;
  heap: boolean;
  /** Mean bytes between heap samples, allocations then retained: DENSE_HEAP_SAMPLING (--heap) unless given. */
  heapSampling?: HeapSampling;
  /**
   * Without `heap`: the heap sampler starts only when startHeap() is called during a window
   * (heap-trigger.ts: the target shows GC pressure or heap growth).
   */
  heapOnDemand?: boolean;
  send: (body: ProfileBody) => void;
  onError: (what: string, err: unknown) => void;
  /** Called when a profile starts (true) and once its files are written with none running (false). */
  onBusy?: (busy: boolean) => void;
  /** Called when the stop requests go to V8 (true) and when V8 has answered them all (false): the main thread may be blocked meanwhile. */
  onStopping?: (stopping: boolean) => void;
  /** URL prefix of the agent's own scripts (its bundle's directory), never asked for function ranges. */
  ownScriptsUrl?: string;
  /**
   * The mid-load heap switch held the main thread at most from `start` to `end` (epoch ms): V8
   * built the allocation profile there, while the load ran. Reported whatever its length, so the
   * analysis can leave those intervals out of the loop-delay figures.
   */
  onPause?: (start: number, end: number) => void;
}

interface CpuProfile {
  startTime: number;
  endTime: number;
  samples?: number[];
  nodes?: { callFrame: { scriptId: string; url: string }; hitCount?: number; positionTicks?: unknown[] }[];
}
interface HeapProfileNode {
  callFrame: { scriptId: string; url: string; functionName?: string };
  children?: HeapProfileNode[];
}
interface HeapProfile {
  head?: HeapProfileNode;
  samples?: unknown[];
}

/** The heap view a sampler started late takes once the middle of the window is past (startHeap). */
export type LateHeapView = 'allocations' | 'retained' | 'both';

/** One profiling window: its session, and what its heap sampler samples now. */
interface Running {
  session: Session;
  /** Epoch ms the window started. */
  started: number;
  /** Epoch ms the current heap sampler started (the window's start, or the switch to retained). */
  heapStart: number;
  /** The heap sampler: allocations (collected objects kept), or what stays alive (after the switch). */
  heap?: 'allocations' | 'retained';
  suffix: string;
  switchTimer?: NodeJS.Timeout;
  /** Epoch ms of the switch to the retained view (profile-start's heapRetainedFrom). */
  retainedFrom?: number;
}

/**
 * Objects collected are kept: allocation pressure, who allocates, garbage included (gc-pressure).
 * Without these flags V8 drops a sample when its object is collected (a weak handle per sample),
 * so a profile stopped after a full GC holds only what is still alive.
 */
const ALLOCATION_FLAGS = { includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
/**
 * Mean bytes between allocation samples. V8 builds the profile on the main thread when it is
 * stopped, about 1.2 µs per sample, and with collected objects kept every sample stays: at
 * CDP's default of 32 KiB an allocation-heavy server (3 GB in 2.5 s) had 99,000 samples and its
 * loop held 270 ms by the stop in the middle of the load. 64 KiB halves that and still gives
 * thousands of samples to rank allocators by.
 */
export const ALLOCATION_SAMPLING_BYTES = 64 * 1024;
/** The retained sampler keeps only live objects (cheap to stop): V8's default density, for a leak's few MB. */
export const RETAINED_SAMPLING_BYTES = 32 * 1024;

/** Mean bytes between samples of the allocation sampler, then of the retained one. */
export interface HeapSampling {
  allocationBytes: number;
  retainedBytes: number;
}
/** `--heap`: dense sampling, for a detailed allocation view. */
export const DENSE_HEAP_SAMPLING: HeapSampling = { allocationBytes: ALLOCATION_SAMPLING_BYTES, retainedBytes: RETAINED_SAMPLING_BYTES };
/**
 * Every default run (no --heap): 8 times sparser, so the sampler costs the target little (a
 * stack capture per 512 KiB allocated: 2,300 a second on a server allocating 1.2 GB/s) and
 * the mid-load switch holds its loop 8 times less, while a leak of 8 MiB in the second half of a
 * load still leaves about 32 retained samples and an allocation-heavy route thousands (enough to
 * rank the first few functions by share). See docs/agent.md, The retained view.
 */
export const LIGHT_HEAP_SAMPLING: HeapSampling = { allocationBytes: 512 * 1024, retainedBytes: 256 * 1024 };

export class InspectorProfiler {
  private running: Running | undefined;
  /** The retained heap sampler left running after profile-stop, until stopRetained() (after the post-load GC). */
  private retained: Running | undefined;
  /** Writes and stops in progress, and who waits for them: a flush right after profile-stop must
   *  wait for the files (a large heap profile takes a while to serialize), or the target is stopped first. */
  private pending = 0;
  private waiting: (() => void)[] = [];
  private windows = 0;
  /** Script ids with sampled lines in the profiles written so far (their function ranges are asked at the end). */
  readonly profiledScripts = new Set<string>();

  /** `connect` opens a new connected session (connectToMainThread() or connect()). */
  constructor(
    private readonly connect: () => Session,
    private readonly opts: ProfilerOptions,
  ) {}

  private get sampling(): HeapSampling {
    return this.opts.heapSampling ?? DENSE_HEAP_SAMPLING;
  }

  get isRunning(): boolean {
    return this.running !== undefined;
  }

  /**
   * Starts the CPU profile and, with `heap`, the allocation sampler. `retainedFrom` (epoch ms):
   * when to restart the heap sampler without keeping collected objects, so the rest of the
   * window is sampled for what stays alive (written by stopRetained as heap-retained-*).
   */
  start(retainedFrom?: number): void {
    if (this.running !== undefined) return;
    let s: Session;
    try {
      s = this.connect();
    } catch (err) {
      return this.opts.onError('inspector', err);
    }
    // A new window ends the retained sampler of the last one (one heap sampler per isolate).
    this.dropRetained();
    const suffix = this.windows++ === 0 ? '' : `-${this.windows}`;
    const started = epochNow();
    const running: Running = { session: s, started, heapStart: started, suffix, ...(retainedFrom !== undefined ? { retainedFrom } : {}) };
    this.running = running;
    this.opts.onBusy?.(true);
    s.post('Profiler.enable', this.fail('profiler-enable'));
    s.post('Profiler.setSamplingInterval', { interval: this.opts.samplingIntervalUs }, this.fail('profiler-interval'));
    s.post('Profiler.start', this.fail('profiler-start'));
    if (this.opts.heap) this.startSampling(running);
  }

  /**
   * The heap sampler of the running window, started late (heapOnDemand): the allocation view
   * until the switch to the retained view; once that time is past, the view `late` asks for
   * (the allocations to the end of the window, what stays alive, or 'both': the allocations for
   * half the time left, what stays alive after).
   */
  startHeap(late: LateHeapView = 'retained', sampling?: HeapSampling): void {
    const running = this.running;
    if (running === undefined || running.heap !== undefined || !(this.opts.heap || this.opts.heapOnDemand)) return;
    this.startSampling(running, late, sampling);
  }

  /** `sampling`: this window's intervals instead of the profiler's (a small growth seen late: dense). */
  private startSampling(running: Running, late: LateHeapView = 'retained', sampling = this.sampling): void {
    const s = running.session;
    const now = epochNow();
    running.heapStart = now;
    s.post('HeapProfiler.enable', this.fail('heap-enable'));
    const past = running.retainedFrom !== undefined && running.retainedFrom <= now;
    if (past && late === 'both' && running.retainedFrom !== undefined) {
      // The window's end mirrors its start about the middle; the switch splits what is left.
      const end = 2 * running.retainedFrom - running.started;
      running.retainedFrom = now + Math.max(0, (end - now) / 2);
    }
    if (late === 'both') late = 'retained';
    const stillPast = running.retainedFrom !== undefined && running.retainedFrom <= now;
    if (stillPast && late === 'allocations') {
      running.heap = 'allocations';
      s.post(
        'HeapProfiler.startSampling',
        { samplingInterval: sampling.allocationBytes, ...ALLOCATION_FLAGS } as object,
        this.fail('heap-start'),
      );
      return;
    }
    if (stillPast) {
      running.heap = 'retained';
      s.post('HeapProfiler.startSampling', { samplingInterval: sampling.retainedBytes } as object, this.fail('heap-retained-start'));
      return;
    }
    running.heap = 'allocations';
    s.post(
      'HeapProfiler.startSampling',
      { samplingInterval: sampling.allocationBytes, ...ALLOCATION_FLAGS } as object,
      this.fail('heap-start'),
    );
    if (running.retainedFrom !== undefined) running.switchTimer = setTimeout(() => this.toRetained(running), running.retainedFrom - now);
  }

  /**
   * Mid-window: stops the allocation sampler (its file covers the window so far) and starts one
   * that drops collected objects. V8 handles the two in order, so nothing is sampled twice.
   */
  private toRetained(running: Running): void {
    if (this.running !== running || running.heap !== 'allocations') return;
    const s = running.session;
    const start = running.heapStart;
    running.heap = 'retained';
    running.heapStart = epochNow();
    this.track();
    this.opts.onStopping?.(true);
    const paused = epochNow();
    s.post('HeapProfiler.stopSampling', (err, result) => {
      this.opts.onStopping?.(false);
      this.opts.onPause?.(paused, epochNow());
      if (err || !result?.profile) {
        this.opts.onError('heap-stop', err ?? new Error('no heap profile'));
        return this.untrack();
      }
      this.writeHeap('heap', result.profile as unknown as HeapProfile, start, running.suffix, () => this.untrack());
    });
    s.post('HeapProfiler.startSampling', { samplingInterval: this.sampling.retainedBytes } as object, this.fail('heap-retained-start'));
  }

  /**
   * Stops and writes the CPU profile and the allocation sampler; `done` runs after the files are
   * written (or failed). A retained sampler keeps running: stopRetained() ends it after the
   * post-load GC, when only what the app keeps is left.
   */
  stop(done: () => void): void {
    const running = this.running;
    if (running === undefined) return this.whenIdle(done);
    this.running = undefined;
    if (running.switchTimer !== undefined) clearTimeout(running.switchTimer);
    const session = running.session;
    const heap = running.heap === 'allocations';
    if (running.heap === 'retained') this.retained = running;
    // Disconnect as soon as V8 has answered every stop: the files are written without it.
    let answers = heap ? 2 : 1;
    const answered = (): void => {
      if (--answers > 0) return;
      if (this.retained !== running) endProfilerSession(session);
      this.opts.onStopping?.(false);
    };
    this.opts.onStopping?.(true);
    this.track();
    session.post('Profiler.stop', (err, result) => {
      answered();
      if (err || !result?.profile) {
        this.opts.onError('profiler-stop', err ?? new Error('no profile'));
        return this.untrack();
      }
      this.writeCpu(result.profile as unknown as CpuProfile, running.suffix, () => this.untrack());
    });
    if (heap) {
      this.track();
      session.post('HeapProfiler.stopSampling', (err, result) => {
        answered();
        if (err || !result?.profile) {
          this.opts.onError('heap-stop', err ?? new Error('no heap profile'));
          return this.untrack();
        }
        this.writeHeap('heap', result.profile as unknown as HeapProfile, running.heapStart, running.suffix, () => this.untrack());
      });
    }
    this.whenIdle(done);
  }

  /**
   * Ends the retained sampler. `keep`: the main thread has just had a full GC with the load over
   * (post-load-gc.ts), so the profile holds only what the app keeps: it is written as
   * heap-retained-<pid>-<tid>.heapprofile. Otherwise (no GC: uncollected garbage would still be
   * in it; an exit) it is dropped. `done` after the file is written, or at once.
   */
  stopRetained(keep: boolean, done: () => void): void {
    const r = this.retained;
    if (r === undefined) return this.whenIdle(done);
    this.retained = undefined;
    if (!keep) {
      endProfilerSession(r.session);
      this.whenIdle(done);
      return;
    }
    this.track();
    this.opts.onStopping?.(true);
    try {
      r.session.post('HeapProfiler.stopSampling', (err, result) => {
        endProfilerSession(r.session);
        this.opts.onStopping?.(false);
        if (err || !result?.profile) {
          this.opts.onError('heap-retained-stop', err ?? new Error('no heap profile'));
          return this.untrack();
        }
        this.writeHeap('heap-retained', result.profile as unknown as HeapProfile, r.heapStart, r.suffix, () => this.untrack());
      });
    } catch (err) {
      this.opts.onStopping?.(false);
      this.opts.onError('heap-retained-stop', err);
      this.untrack();
    }
    this.whenIdle(done);
  }

  /** Stops everything (the process is exiting): the retained sampler is dropped, not written. */
  stopAll(done: () => void): void {
    this.stop(() => this.stopRetained(false, done));
  }

  private dropRetained(): void {
    const r = this.retained;
    this.retained = undefined;
    if (r !== undefined) endProfilerSession(r.session);
  }

  private fail(what: string): (err: Error | null) => void {
    return (err) => {
      if (err) this.opts.onError(what, err);
    };
  }

  private track(): void {
    this.pending++;
  }

  private untrack(): void {
    if (--this.pending > 0) return;
    this.opts.onBusy?.(this.running !== undefined || this.retained !== undefined);
    const waiting = this.waiting;
    this.waiting = [];
    for (const cb of waiting) cb();
  }

  /** `done` once no stop or write is in progress. */
  private whenIdle(done: () => void): void {
    if (this.pending === 0) {
      this.opts.onBusy?.(this.running !== undefined || this.retained !== undefined);
      done();
    } else {
      this.waiting.push(done);
    }
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
      type: 'profile',
      kind: 'cpu',
      file,
      start,
      end,
      clock: { profileStartUs: profile.startTime, profileEndUs: profile.endTime },
      samples: profile.samples?.length ?? 0,
    });
  }

  private writeHeap(kind: 'heap' | 'heap-retained', profile: HeapProfile, start: number, suffix: string, done: () => void): void {
    const { pid, threadId } = this.opts;
    const file = `${kind}-${pid}-${threadId}${suffix}.heapprofile`;
    // Anonymous allocation sites get function ranges too (named by the function they lie in).
    profiledScripts(heapNodes(profile.head), this.profiledScripts, this.opts.ownScriptsUrl);
    this.write(file, profile, done, { type: 'profile', kind, file, start, end: epochNow(), samples: profile.samples?.length ?? 0 });
  }

  private write(file: string, data: unknown, done: () => void, message: ProfileBody): void {
    let text: string;
    try {
      text = JSON.stringify(data);
    } catch (err) {
      this.opts.onError('profile-serialize', err);
      return done();
    }
    writeFileSpared(join(this.opts.runDir, file), text, (err) => {
      if (err) this.opts.onError('profile-write', err);
      else this.opts.send(message);
      done();
    });
  }
}

/** The nodes of a heap profile's tree, iteratively (deep trees must not overflow the stack). */
function heapNodes(head: HeapProfileNode | undefined): HeapProfileNode[] {
  const out: HeapProfileNode[] = [];
  const stack = head === undefined ? [] : [head];
  for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
    out.push(n);
    for (const c of n.children ?? []) stack.push(c);
  }
  return out;
}

/** Disconnecting stops whatever still runs in that session; it must never throw into the caller. */
export function disconnect(session: Session): void {
  try {
    session.disconnect();
  } catch {
    // Already disconnected.
  }
}
