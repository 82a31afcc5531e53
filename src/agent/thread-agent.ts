// The agent of one thread (a process's main thread, or a worker thread): says hello, waits
// for a server to listen, then samples every interval, batches GCs, reports growth every
// second and answers control messages. On a target's main thread it starts the agent worker
// (stalls and profiles, see worker/agent-worker.ts); a worker-thread target profiles its own
// isolate in-thread. Everything here runs under `safely`: nothing throws into user code.
// Each collector, the profiler and each growth hook is a part of its own (`guardPart`, safe.ts):
// one that fails is disabled and reported once by name, the others keep running; and the data
// every diagnosis needs (samples, GCs, the profiler) starts before any optional hook runs.
// A listen that does not make the thread a target (a launcher's IPC pipe, a cluster primary's
// shared handle) is reported but starts nothing: the wrapper is not measured as if it were the app.
// A cluster primary sends its own stream instead (`primary` messages, collectors/primary-sampler.ts):
// its CPU, loop and the connections it hands to workers, never mixed into the workers' samples.
//
//   main thread ── conn A: hello, listen, sample, gc, growth, agent-error ──▶ CLI
//        │ heartbeat (SharedArrayBuffer)                                       │
//        ▼                                                                     │
//   agent worker ── conn B: stall, profile, bye ─────────────────────────────▶ │
//        ◀─────────────── control (to both connections) ──────────────────────┘
import { isMainThread, threadId, Worker } from 'node:worker_threads';
import { join } from 'node:path';
import type * as net from 'node:net';
import type { AgentConfig, ControlMessage, SampleMessage } from './protocol.js';
import { AgentConnection } from './connection.js';
import { buildHello } from './hello.js';
import { watchClusterFork, type ClusterModule } from './cluster-primary.js';
import { PrimarySampler } from './collectors/primary-sampler.js';
import { onServerListening, describeListen, isTargetListen } from './listen-detector.js';
import { safely, reportError, setErrorSink, guardPart, partFailed } from './safe.js';
import { threadState } from './thread-state.js';
import { HttpCollector } from './collectors/http-collector.js';
import { DrivenServer } from './driven-server.js';
import { GC_WINDOW_PERIOD_MS, GcCollector } from './collectors/gc-collector.js';
import { Sampler } from './collectors/sampler.js';
import { loopTick, LOOP_DELAY_RESOLUTION_MS } from './collectors/loop-delay.js';
import { timed, timedEvery } from './own-time.js';
import { unrefInterval, listen, originalClearInterval } from './originals.js';
import { ExitCauseWatch } from './exit-cause.js';
import { epochNow } from './clock.js';
import { guardPosts } from './profiling/guarded-session.js';
import { InspectorProfiler } from './profiling/inspector-profiler.js';
import { reserveFd } from './fd-reserve.js';
import { ProfileRescueFlag, rescueProfilesAtExit } from './profiling/profile-rescue.js';
import { HEARTBEAT_MS } from './worker/stall-watchdog.js';
import { MAIN_FLUSHED, type AgentWorkerData, type HeapWantedMessage, type ScriptsWantedMessage } from './worker/worker-data.js';
import { MidLoadGc } from './profiling/mid-load-gc.js';
import { HeapTrigger, threadCpuMs, type HeapWanted } from './profiling/heap-trigger.js';
import { newCostBuffer } from './worker/own-cpu.js';
import { isPostLoadGc, POST_LOAD_SAMPLED } from './profiling/post-load-gc.js';
import { oldGenerationUsed } from './collectors/full-gc-canary.js';
import type { GrowthHooks } from './hooks/growth-hooks.js';

/** Growth totals go out at most this often (and only when they changed). */
export const GROWTH_EVERY_MS = 1000;

/** The agent's parts, as `agent-error` names them (`what`); hooks are `hook:<name>`. */
export const PART = {
  http: 'collector:http',
  gc: 'collector:gc',
  sampler: 'sampler',
  /** The agent worker of a main thread: its profiler and stall watchdog. */
  worker: 'profiler',
  /** A worker-thread target's agent worker: its stall watchdog only. */
  watchdog: 'stall-watchdog',
  /** A worker-thread target's own in-thread profiler. */
  profiler: 'profiler:in-thread',
  /** A cluster primary's own telemetry. */
  primary: 'primary-sampler',
} as const;

export interface ThreadAgentOptions {
  socket: string;
  runDir: string;
  config: AgentConfig;
  cluster: { isPrimary: boolean; workerId?: number };
  growth?: GrowthHooks;
  /** Where the agent's bundles live (the worker bundle is found next to the agent). */
  agentDir: string;
}

export class ThreadAgent {
  private readonly conn: AgentConnection;
  private readonly http = new HttpCollector();
  private readonly driven = new DrivenServer();
  private readonly gc = new GcCollector();
  private readonly sampler: Sampler;
  private timers: NodeJS.Timeout[] = [];
  private worker: Worker | undefined;
  private inThreadProfiler: InspectorProfiler | undefined;
  private primary: PrimarySampler | undefined;
  /** When a default run starts sampling the heap (profiling/heap-trigger.ts). */
  private readonly heapTrigger = new HeapTrigger();
  /** The full GC the worker forces in the middle of the load (profiling/mid-load-gc.ts). */
  private readonly midLoadGc = new MidLoadGc();
  private started = false;
  /** The heartbeat the sampler writes (when it ticks at least every HEARTBEAT_MS). */
  private beat: Float64Array | undefined;
  /** Shared with the agent worker: lets a crash or process.exit() keep the running profile. */
  private readonly rescue = new ProfileRescueFlag();
  /** What ends the process: the caller of process.exit(), the uncaught error (exit-cause.ts). */
  private readonly exitCause = new ExitCauseWatch();

  constructor(private readonly opts: ThreadAgentOptions) {
    this.conn = new AgentConnection(opts.socket, threadId);
    this.sampler = new Sampler(this.http, opts.config.intervalMs);
    setErrorSink((what, message) => this.conn.send({ type: 'agent-error', what, message }));
  }

  /** `listening`: a server that listened before the agent started (a worker thread's, see preload.ts). */
  start(problem?: string, listening?: net.Server): void {
    this.conn.send(buildHello(this.opts.cluster));
    if (problem !== undefined) reportError('config', problem);
    this.conn.onControl((msg) => safely('control', () => this.onControl(msg)));
    onServerListening((server) => safely('listen', () => this.onListen(server)));
    if (listening !== undefined) safely('listen', () => this.onListen(listening));
    this.exitCause.watch();
    const onExit = (code: unknown) => safely('exit', () => this.onExit(code, onExit));
    listen(process, 'exit', onExit);
    if (isMainThread && this.opts.cluster.workerId === undefined) {
      watchClusterFork((cluster, forkSite) => {
        this.conn.send(buildHello({ isPrimary: true }));
        guardPart(PART.primary, () => this.startPrimary(cluster, forkSite));
      });
    }
  }

  private onListen(server: net.Server): void {
    this.conn.send(describeListen(server));
    if (!isTargetListen(server)) return;
    if (!this.started) this.startCollecting();
    safely('driven-server', () => this.driven.onListen(server));
    // Optional hooks last, each guarded on its own (growth-hooks.ts): none can cost the data above.
    // Marked busy: what they do (a require, a patch) is the agent's, not the app's growth.
    const growth = this.opts.growth;
    if (growth === undefined) return;
    threadState.agentBusy++;
    try {
      growth.onListen(server);
    } finally {
      threadState.agentBusy--;
    }
  }

  /** Samples, GCs, HTTP counts and the profiler (agent worker): what every diagnosis needs. */
  private startCollecting(): void {
    this.started = true;
    threadState.listening = true;
    guardPart(PART.http, () => this.http.start());
    // The sample, the GC windows and the growth report ride on the loop-delay timer when their
    // periods are whole numbers of its own (one wakeup for all: loop-delay.ts), each timed apart.
    const sample = (): void => safely('sample', () => this.sendSample());
    const growth = (): void => safely('growth', () => this.sendGrowth());
    const intervalMs = this.opts.config.intervalMs;
    const sampleTick = loopTick(intervalMs, timed(sample, timedEvery(intervalMs)));
    const growthTick = loopTick(GROWTH_EVERY_MS, timed(growth, timedEvery(GROWTH_EVERY_MS)));
    const gcPeriod = loopTick(
      GC_WINDOW_PERIOD_MS,
      timed(() => safely('gc', () => this.gc.nextPeriod()), timedEvery(GC_WINDOW_PERIOD_MS)),
    );
    // Before the period's tick: a window opened at this fire closes at a later one.
    const gcFire = gcPeriod && { every: 1, fn: (): void => safely('gc', () => this.gc.driverFired()) };
    const onLoop =
      guardPart(PART.sampler, () => {
        // The fire's messages (GCs, sample, growth) leave in one write (connection.ts, hold).
        this.sampler.start([sampleTick, gcFire, gcPeriod, growthTick], {
          before: () => this.conn.hold(),
          after: () => this.conn.release(),
        });
        return true;
      }) === true;
    guardPart(PART.gc, () => this.gc.start(onLoop && gcPeriod !== undefined ? LOOP_DELAY_RESOLUTION_MS : undefined));
    if (!onLoop || sampleTick === undefined) this.timers.push(unrefInterval(sample, intervalMs));
    if (!onLoop || growthTick === undefined) this.timers.push(unrefInterval(growth, GROWTH_EVERY_MS));
    if (isMainThread) {
      this.worker = guardPart(PART.worker, () => this.startWorker(false));
    } else {
      guardPart(PART.profiler, () => this.startInThreadProfiler());
      guardPart(PART.watchdog, () => this.startWorker(true));
    }
  }

  /** The primary's stream: its own sampler and timer, nothing of a target's (no profile, no hooks). */
  private startPrimary(cluster: ClusterModule, forkSite: import('./protocol.js').CallStack): void {
    const sampler = new PrimarySampler(cluster as never, forkSite, this.opts.config.intervalMs);
    sampler.start();
    this.primary = sampler;
    this.timers.push(unrefInterval(() => this.sendPrimary(), this.opts.config.intervalMs));
  }

  private sendPrimary(): void {
    const sampler = this.primary;
    if (sampler === undefined) return;
    const body = guardPart(PART.primary, () => sampler.take());
    if (body !== undefined) this.conn.send(body);
  }

  /** `fresh`: a run's last samples (flush, exit, after the post-load GC) read every memory figure now. */
  private sendSample(postLoadGc?: SampleMessage['postLoadGc'], fresh = postLoadGc !== undefined): void {
    if (this.beat !== undefined) this.beat[0] = epochNow();
    const gcOk = !partFailed(PART.gc);
    const events = gcOk ? (guardPart(PART.gc, () => this.gc.take()) ?? []) : [];
    if (events.length > 0) this.conn.send({ type: 'gc', events });
    const sample = guardPart(PART.sampler, () => this.sampler.take(this.conn.dropped + (gcOk ? this.gc.dropped : 0), fresh));
    if (sample === undefined) return;
    const gc = gcOk ? guardPart(PART.gc, () => this.gc.takeInterval()) : undefined;
    if (gc !== undefined) {
      sample.gc = gc;
      // GC pressure or heap growth while a profile runs: the worker starts sampling the heap.
      safely('heap-trigger', () => this.heapTrigger.loop(sample.intervalMs, sample.elu, threadCpuMs(sample.cpu)));
      this.heapTrigger.countRequests(sample.http?.finished ?? 0);
      // Full GCs' readings of the live heap first: where one was judged, the trigger's rougher
      // reading (the old generation with its garbage) no longer stands in for it (heap-trigger.ts).
      // A full GC of V8's own reads what is live as well as the forced one does.
      const ownFull = gc.heapAfterFull?.[gc.heapAfterFull.length - 1];
      if (ownFull !== undefined) safely('heap-trigger', () => this.wantHeap(this.heapTrigger.liveAfterFullGc(ownFull.bytes, false)));
      safely('mid-load-gc', () => {
        const forced = this.midLoadGc.observe(epochNow(), gc.full, oldGenerationUsed);
        if (forced === undefined) return;
        this.conn.send({ type: 'stall', ...forced, ongoing: false, byAgent: 'mid-load-gc' });
        this.heapTrigger.agentFullGc(forced.start, forced.start + forced.durationMs);
        // The live heap grew in the first half: the worker samples what stays alive in the second.
        this.wantHeap(this.heapTrigger.liveAfterFullGc(forced.heapAfter));
      });
      safely('heap-trigger', () => this.wantHeap(this.heapTrigger.observe(epochNow(), events, gc.observedMs)));
    }
    if (postLoadGc !== undefined) sample.postLoadGc = postLoadGc;
    this.conn.send(sample);
    // Scripts of handlers that left requests unanswered: their function ranges are written at the flush.
    const scripts = this.http.unanswered.takeScripts();
    const to = this.worker;
    if (to !== undefined && scripts.length > 0)
      safely('unanswered-scripts', () => to.postMessage({ hotpathScriptsWanted: scripts } satisfies ScriptsWantedMessage));
  }

  /** The heap trigger fired: the worker starts sampling the heap for that reason. */
  private wantHeap(wanted: HeapWanted | undefined): void {
    if (wanted !== undefined) this.worker?.postMessage({ hotpathHeapWanted: wanted } satisfies HeapWantedMessage);
  }

  /**
   * The sample right after the full GC the worker forced once the load was over: what the app
   * still holds (post-load-gc.ts). The worker says bye once it has left the process.
   */
  private sendPostLoadSample(worker: Worker, gcMs: number): void {
    if (!this.started) return;
    this.sendSample({ gcMs, heapAfter: oldGenerationUsed() });
    this.conn.afterWrites(() => safely('post-load-gc', () => worker.postMessage(POST_LOAD_SAMPLED)));
  }

  private sendGrowth(): void {
    const body = this.opts.growth?.snapshot();
    if (body !== undefined) this.conn.send(body);
  }

  /** The agent worker: stalls and profiles for the main thread, stalls only for a worker-thread target. */
  private startWorker(watchdogOnly: boolean): Worker {
    const heartbeat = new SharedArrayBuffer(8);
    const beat = new Float64Array(heartbeat);
    beat[0] = epochNow();
    // Every wakeup costs the target CPU: the sampler's tick doubles as the heartbeat when it is frequent enough.
    if (this.opts.config.intervalMs <= HEARTBEAT_MS) this.beat = beat;
    else
      this.timers.push(
        unrefInterval(() => {
          beat[0] = epochNow();
        }, HEARTBEAT_MS),
      );
    const cost = newCostBuffer();
    this.sampler.cost.attach(cost);
    const data: AgentWorkerData = {
      hotpathAgentWorker: true,
      socket: this.opts.socket,
      runDir: this.opts.runDir,
      config: this.opts.config,
      pid: process.pid,
      threadId,
      heartbeat,
      watchdogOnly,
      profileRescue: this.rescue.buffer,
      cost,
    };
    // No execArgv (no user loaders in our worker) and no HOTPATH_* env: if NODE_OPTIONS preloads
    // the agent into this worker anyway, it finds no socket and stays inert.
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.HOTPATH_SOCKET;
    threadState.agentBusy++;
    let worker: Worker;
    try {
      worker = new Worker(join(this.opts.agentDir, 'agent-worker.cjs'), {
        workerData: data,
        execArgv: [],
        env,
        stdout: true,
        stderr: true,
      });
    } finally {
      threadState.agentBusy--;
    }
    for (const owned of [worker, worker.stdout, worker.stderr]) threadState.agentOwned.add(owned);
    listen(worker, 'error', (err: unknown) => reportError('agent-worker', err));
    listen(worker, 'message', (m: unknown) => {
      if (isPostLoadGc(m)) safely('post-load-gc', () => this.sendPostLoadSample(worker, m.hotpathPostLoadGc.gcMs));
    });
    // After the listeners: unref() also unrefs the message port a 'message' listener refs.
    worker.unref();
    return worker;
  }

  private startInThreadProfiler(): void {
    // This thread writes its own profiles: a spare descriptor for them, should the app use up the rest.
    reserveFd();
    const inspector = require('node:inspector') as typeof import('node:inspector');
    const connect = (): import('node:inspector').Session => {
      // A post that throws must never reach the app as an uncaught exception (guarded-session.ts).
      const session = guardPosts(new inspector.Session());
      session.connect();
      return session;
    };
    this.inThreadProfiler = new InspectorProfiler(connect, {
      runDir: this.opts.runDir,
      pid: process.pid,
      threadId,
      samplingIntervalUs: this.opts.config.cpuSamplingIntervalUs,
      heap: this.opts.config.heap,
      send: (body) => this.conn.send(body),
      onError: reportError,
    });
  }

  private onControl(msg: ControlMessage): void {
    if (msg.cmd === 'target') {
      this.driven.setTarget(msg);
      this.http.drivenOnly = this.driven.known;
      return;
    }
    // The worker's own connection may miss a command sent while it opened: pass every one on
    // (the worker acts once per seq).
    if (this.worker !== undefined && msg.cmd !== 'phase') this.worker.postMessage({ hotpathForward: msg });
    if (msg.cmd === 'profile-start' && !this.opts.config.heap && this.opts.config.heapSample)
      this.heapTrigger.arm(epochNow(), msg.heapRetainedFrom);
    else if (msg.cmd === 'profile-stop') this.heapTrigger.disarm();
    if (msg.cmd === 'profile-start') this.midLoadGc.arm(epochNow(), msg.heapRetainedFrom);
    else if (msg.cmd === 'profile-stop') this.midLoadGc.disarm();
    const p = this.inThreadProfiler;
    if (msg.cmd === 'profile-start') p?.start();
    else if (msg.cmd === 'profile-stop') p?.stop(() => {});
    else if (msg.cmd === 'flush') this.flush();
  }

  /** Last sample and growth; then the worker (if any) says bye after the profiles, else we do. */
  private flush(): void {
    this.sendPrimary();
    if (this.started) {
      this.http.noteStillWaiting();
      this.sendSample(undefined, true);
      this.sendGrowth();
    }
    const worker = this.worker;
    if (worker !== undefined) {
      this.conn.afterWrites(() => safely('flush', () => worker.postMessage(MAIN_FLUSHED)));
      return;
    }
    const bye = (): void => void this.conn.send({ type: 'bye', reason: 'flush' });
    if (this.inThreadProfiler !== undefined) this.inThreadProfiler.stop(bye);
    else bye();
  }

  /** `code`: what 'exit' was given, sent on for a CLI that did not spawn this process (a watcher's child). */
  private onExit(code: unknown, listener: Function): void {
    // An exit from inside a timer fire (app code a growth report reads, such as a getMaxListeners,
    // calling process.exit()): what the fire held goes first, and the rest is written at once.
    this.conn.release();
    // A crash or process.exit() mid-profile: the worker writes it first (bounded), then bye.
    const worker = this.worker;
    if (worker !== undefined) safely('profile-rescue', () => rescueProfilesAtExit(worker, this.rescue));
    if (this.started) this.sendSample(undefined, true);
    this.sendPrimary();
    // Who called process.exit() is on the stack below this listener (node's emit and exit skipped).
    const cause = safely('exit-cause', () => this.exitCause.describe(listener));
    this.conn.send({ type: 'bye', reason: 'exit', ...(typeof code === 'number' ? { code } : {}), ...(cause ? { cause } : {}) });
    for (const t of this.timers) originalClearInterval(t);
  }
}
