// Entry of the agent worker (bundled to dist/agent/agent-worker.cjs), started by the agent on
// a target's main thread. It holds its own connection to the CLI, so it keeps working while
// the main thread is blocked: it watches the heartbeat (stalls), and it drives the main
// thread's CPU/heap profilers through inspector.Session#connectToMainThread(). Its handles
// are ref'd (so it stays alive: research 1.1) but the Worker itself is unref'd by the main
// thread, so it never keeps the process alive. When the main thread exits mid-profile (a crash,
// process.exit()), it waits while this worker writes the profile: see profile-rescue.ts.
import { parentPort, workerData } from 'node:worker_threads';
import type { Session } from 'node:inspector';
import { pathToFileURL } from 'node:url';
import type { ControlMessage } from '../protocol.js';
import { AgentConnection, useConnectionSecret } from '../connection.js';
import { DENSE_HEAP_SAMPLING, LIGHT_HEAP_SAMPLING, InspectorProfiler } from '../profiling/inspector-profiler.js';
import { guardPosts } from '../profiling/guarded-session.js';
import { ProfileRescueFlag, RESCUE_PROFILES } from '../profiling/profile-rescue.js';
import { CHECK_MS, StallWatchdog } from './stall-watchdog.js';
import { OwnCpu, watchedThreadCpu } from './own-cpu.js';
import { loopThreadCpu } from './loop-thread-cpu.js';
import { StallCause } from './stall-cause.js';
import { captureScripts } from '../profiling/script-capture.js';
import { reserveFd } from '../fd-reserve.js';
import { CallCounter } from '../profiling/call-counts.js';
import { ThrowWatch, writeThrows } from '../profiling/throw-watch.js';
import { ProfilerPrime } from '../profiling/profiler-prime.js';
import { profiledScripts } from '../profiling/function-ranges.js';
import {
  isHeapWanted,
  isScriptsWanted,
  isAgentWorkerData,
  isForwardedControl,
  MAIN_FLUSHED,
  oncePerSeq,
  type AgentWorkerData,
} from './worker-data.js';
import {
  collectGarbage,
  POST_LOAD_GC_TIMEOUT_MS,
  POST_LOAD_SAMPLE_WAIT_MS,
  POST_LOAD_SAMPLED,
  POST_LOAD_STUCK_MS,
  type PostLoadGc,
} from '../profiling/post-load-gc.js';

/** How long a flush waits for the main thread's last sample before saying bye anyway. */
export const MAIN_FLUSH_WAIT_MS = 500;
/** How long a flush waits for the stacks of a stall still under way (StallWatchdog.reportUnderWay). */
export const STALL_REPORT_WAIT_MS = 1000;

function mainSession(): Session {
  const inspector = require('node:inspector') as typeof import('node:inspector');
  const session = guardPosts(new inspector.Session());
  session.connectToMainThread();
  return session;
}

function run(data: AgentWorkerData): void {
  useConnectionSecret(data.config.secret);
  // A spare descriptor for the profiles and scripts this thread writes, should the app use up the rest.
  reserveFd();
  const conn = new AgentConnection(data.socket, data.threadId, true);
  // The agent's own CPU is refreshed from the watchdog's timer: no wakeup of its own.
  const ownCpu = data.cost !== undefined ? new OwnCpu(data.cost, !data.watchdogOnly, loopThreadCpu(data.threadId)) : undefined;
  ownCpu?.refresh();
  const alsoEachCheck = ownCpu === undefined ? undefined : () => ownCpu.refreshIfDue(CHECK_MS);
  if (data.watchdogOnly) {
    new StallWatchdog(data.heartbeat, (body) => conn.send(body), undefined, watchedThreadCpu(data.threadId)).start(alsoEachCheck);
    return;
  }
  const onError = (what: string, err: unknown): void => {
    conn.send({ type: 'agent-error', what, message: err instanceof Error ? err.message : String(err) });
  };
  const rescue = new ProfileRescueFlag(data.profileRescue);
  const ownScriptsUrl = `${pathToFileURL(__dirname).href}/`;
  // Sessions are connected only while they are used (a profile, a stall): see InspectorProfiler.
  const profiler = new InspectorProfiler(mainSession, {
    runDir: data.runDir,
    pid: data.pid,
    threadId: data.threadId,
    samplingIntervalUs: data.config.cpuSamplingIntervalUs,
    // The heap is sampled densely from the start with --heap; else sparsely, once the main
    // thread sees GC pressure or heap growth (heap-trigger.ts, HeapWantedMessage).
    heap: data.config.heap,
    heapOnDemand: !data.config.heap && data.config.heapSample !== false,
    heapSampling: data.config.heap ? DENSE_HEAP_SAMPLING : LIGHT_HEAP_SAMPLING,
    send: (body) => conn.send(body),
    onError,
    onBusy: (busy) => rescue.setBusy('profile', busy),
    onStopping: (stopping) => watchdog.agentWork(stopping),
    onPause: (start, end) =>
      conn.send({ type: 'stall', start, durationMs: Math.round((end - start) * 10) / 10, ongoing: false, byAgent: 'profile-stop' }),
    ownScriptsUrl,
  });
  // Calls per function in a short window right after the load (profile-start says when).
  const counter = new CallCounter(
    mainSession,
    onError,
    ownScriptsUrl,
    (busy) => watchdog.agentWork(busy, 'call-counts'),
    (start) => conn.send({ type: 'call-window', start }),
  );
  // The exceptions thrown after a load that left requests unanswered (the CLI says when: watch-throws).
  const throws = new ThrowWatch(mainSession, onError, (start) => conn.send({ type: 'throw-watch', start }));
  // Scripts a stall's profile sampled get function ranges too (a run without a CPU profile).
  const cause = new StallCause(
    mainSession,
    (busy) => rescue.setBusy('stall', busy),
    (nodes) => profiledScripts(nodes, profiler.profiledScripts, ownScriptsUrl),
  );
  const watchdog = new StallWatchdog(
    data.heartbeat,
    (body) => conn.send(body),
    cause,
    watchedThreadCpu(data.threadId),
    (underWay) => rescue.setBusy('stallUnderWay', underWay),
  );
  watchdog.start(alsoEachCheck);
  // A run that will profile pays V8's first-start work now, before the load (profiler-prime.ts).
  const prime = new ProfilerPrime(mainSession, data.config.cpuSamplingIntervalUs, onError, (busy) => {
    rescue.setBusy('prime', busy);
    watchdog.agentWork(busy, 'profiler-prime');
  });
  if (data.config.profile === true) prime.start();
  const flusher = new Flusher(
    conn,
    profiler,
    (done) => watchdog.reportUnderWay(STALL_REPORT_WAIT_MS, done),
    (done) =>
      captureScripts(
        mainSession,
        {
          runDir: data.runDir,
          pid: data.pid,
          threadId: data.threadId,
          profiledScripts: profiler.profiledScripts,
          ...(counter.window ? { callWindow: counter.window } : {}),
        },
        done,
      ),
    (done) => postLoadGc(watchdog, profiler, flusher, done),
  );
  let exiting = false;
  // Commands come twice (own connection, forwarded by the main thread): act on the first copy.
  const onControl = oncePerSeq((msg: ControlMessage): void => {
    if (exiting) return;
    if (msg.cmd === 'profile-start') {
      profiler.start(msg.heapRetainedFrom);
      if (msg.callCountFrom !== undefined && msg.callCountUntil !== undefined) counter.schedule(msg.callCountFrom, msg.callCountUntil);
    } else if (msg.cmd === 'profile-stop') {
      profiler.stop(() => {});
    } else if (msg.cmd === 'call-count-read') {
      counter.readNow();
    } else if (msg.cmd === 'watch-throws') {
      // Once the profiles are written: a pause waits for this thread, which must be free to answer it.
      profiler.stop(() => throws.openWatch());
    } else if (msg.cmd === 'flush') {
      // A window not read by now (the run was cut short) is dropped.
      counter.cancel();
      const seen = throws.close();
      if (seen === undefined) return flusher.flush();
      // Their scripts get source maps and function ranges with the profiled ones.
      for (const id of throws.scripts) profiler.profiledScripts.add(id);
      writeThrows(data.runDir, data.pid, data.threadId, seen, onError, () => flusher.flush());
    }
  });
  // The main thread is exiting (crash, process.exit) and waits for its running profile and the
  // stall under way: see profile-rescue.ts. Its heartbeat has stopped for good, so the watchdog
  // stops too.
  const onExitRescue = (): void => {
    exiting = true;
    prime.cancel();
    counter.cancel(); // A call-count window open at exit holds the profile's session (coverage-hold.ts).
    throws.close(); // A process exiting is never held paused.
    let pending = 2;
    const finished = (): void => {
      if (--pending === 0) conn.afterWrites(() => rescue.markDone());
    };
    watchdog.stopAtExit(finished);
    profiler.stopAll(finished);
  };
  parentPort?.on('message', (m: unknown) => {
    if (m === MAIN_FLUSHED) flusher.mainFlushed();
    else if (isHeapWanted(m))
      profiler.startHeap(
        m.hotpathHeapWanted === 'gc' ? 'allocations' : m.hotpathHeapWanted === 'growth-gc' ? 'both' : 'retained',
        m.hotpathHeapWanted === 'live-growth' ? DENSE_HEAP_SAMPLING : undefined,
      );
    else if (m === POST_LOAD_SAMPLED) flusher.postLoadSampled();
    else if (m === RESCUE_PROFILES) onExitRescue();
    else if (isForwardedControl(m)) onControl(m.hotpathForward);
    else if (isScriptsWanted(m)) for (const id of m.hotpathScriptsWanted) profiler.profiledScripts.add(id);
  });
  conn.onControl(onControl);
}

/**
 * The post-load GC (post-load-gc.ts), unless the main thread is stuck (no heartbeat for
 * POST_LOAD_STUCK_MS: it could not send its reading in time); once V8 answered, the main thread
 * is asked for its sample; `done` when that sample left the process or the step's time ran out.
 * A thread only busy (the last requests, a late timer) gets the GC when its loop comes round
 * (V8 runs it as a task there) and sends its reading right after. The retained heap sampler is
 * stopped right after the GC (and dropped without one: it would hold uncollected garbage).
 */
function postLoadGc(watchdog: StallWatchdog, profiler: InspectorProfiler, flusher: Flusher, done: () => void): void {
  const age = watchdog.heartbeatAgeMs();
  if (age === undefined || age >= POST_LOAD_STUCK_MS) return profiler.stopRetained(false, done);
  watchdog.agentWork(true, 'post-load-gc');
  collectGarbage(mainSession, POST_LOAD_GC_TIMEOUT_MS, (gcMs) => {
    watchdog.agentWork(false);
    // Right after the GC the retained sampler holds only what the app keeps (dropped without it).
    if (gcMs === undefined) return profiler.stopRetained(false, done);
    let pending = 2;
    const finished = (): void => {
      if (--pending === 0) done();
    };
    const ask: PostLoadGc = { hotpathPostLoadGc: { gcMs } };
    parentPort?.postMessage(ask);
    flusher.waitPostLoadSample(Date.now() + POST_LOAD_SAMPLE_WAIT_MS, finished);
    profiler.stopRetained(true, finished);
  });
}

/**
 * One `bye` per flush, after a stall still under way was reported with its stacks so far, the profiles are written, the scripts' source maps and function
 * ranges captured (the first flush only), the post-load GC and its sample done (or given up)
 * and the main thread's last sample went out (or timed out).
 */
class Flusher {
  private mainDone = false;
  private postLoadDone = false;
  private flushing = false;
  private scriptsCaptured = false;

  constructor(
    private readonly conn: AgentConnection,
    private readonly profiler: InspectorProfiler,
    private readonly reportStall: (done: () => void) => void,
    private readonly captureScripts: (done: () => void) => void,
    private readonly postLoadGc: (done: () => void) => void,
  ) {}

  mainFlushed(): void {
    this.mainDone = true;
  }

  postLoadSampled(): void {
    this.postLoadDone = true;
  }

  /** Calls `done` once the main thread's post-load sample went out, or at `deadline`. */
  waitPostLoadSample(deadline: number, done: () => void): void {
    this.postLoadDone = false;
    const check = (): void => {
      if (!this.postLoadDone && Date.now() < deadline) return void setTimeout(check, 10);
      done();
    };
    check();
  }

  flush(): void {
    if (this.flushing) return;
    this.flushing = true;
    const deadline = Date.now() + MAIN_FLUSH_WAIT_MS;
    // The main thread's flush first (bounded by the deadline): its last sample names the scripts
    // of the handlers that left requests unanswered (ScriptsWantedMessage, posted before
    // MAIN_FLUSHED), which the capture would otherwise miss (the worker's own copy of the flush
    // command can come first); and the bye goes after the main thread's last messages.
    const afterMain = (then: () => void): void => {
      if (!this.mainDone && Date.now() < deadline) return void setTimeout(() => afterMain(then), 10);
      then();
    };
    const bye = (): void =>
      afterMain(() => {
        this.conn.send({ type: 'bye', reason: 'flush' });
        this.mainDone = false;
        this.flushing = false;
      });
    // The GC after the scripts' capture: a full GC can drop functions the coverage would report.
    const afterProfiles = (): void => this.postLoadGc(bye);
    // A stall still under way first: the scripts its stacks sampled get function ranges with the others.
    this.reportStall(() =>
      this.profiler.stop(() => {
        if (this.scriptsCaptured) return afterProfiles();
        this.scriptsCaptured = true;
        afterMain(() => this.captureScripts(afterProfiles));
      }),
    );
  }
}

if (isAgentWorkerData(workerData)) {
  try {
    run(workerData);
  } catch {
    // Nothing to report to: the connection could not even be made.
  }
}
