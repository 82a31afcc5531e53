// The agent protocol: messages between the in-process agent (inside the target) and the
// hotpath CLI, over a per-run Unix socket whose path is in HOTPATH_SOCKET. One JSON object
// per line (NDJSON) in both directions. Every message carries the protocol version `v`,
// the sender's `pid` and `threadId`, and `t`, the sender's wall clock (epoch ms, fractional).
//
//   target process / thread                       hotpath CLI (src/run)
//   ───────────────────────                       ─────────────────────
//   hello ──────────────────────────────────────▶ (every process and thread that loads the agent)
//   listen ─────────────────────────────────────▶ this process/thread is a target
//   sample, gc, growth, stall (every interval) ─▶ appended to telemetry.ndjson as received
//   ◀──────────────────────────────── control {cmd: 'target' | 'profile-start' | 'profile-stop' | 'phase' | 'flush' | 'call-count-read' | 'watch-throws'}
//   profile ────────────────────────────────────▶ a profile file was written into the run dir
//   bye ────────────────────────────────────────▶ the agent flushed (on 'flush' or exit)
//
// Connections. A thread that loads the agent opens one connection (hello first). A target's
// main thread also starts one helper worker (the "agent worker", which never loads the agent
// itself) that opens a SECOND connection: it sends `stall`, `profile` and the thread's `bye`
// with the main thread's pid/threadId, and it receives control messages itself so that
// profile-stop and flush work while the main thread is blocked. So: identify agents by
// (pid, threadId) from the messages, never by connection; send control to every connection.
//
// Control semantics (what the agent does):
//   target         the server the CLI drives (port, or Unix socket path). Requests to this
//                  thread's servers that listen elsewhere are counted apart (`httpOther`), not
//                  in `http`, from then on. Sent once the CLI chose, and again to every
//                  connection that opens later (the one command the CLI replays).
//   profile-start  start the CPU profile (and heap sampling with config.heap) of every target thread
//   profile-stop   stop, write cpu-<pid>-<tid>.cpuprofile (heap-...heapprofile), send `profile`;
//                  a retained heap sampler (profile-start's heapRetainedFrom) runs on until flush
//   flush (also)   after the profiles, one full GC of the main thread and a sample after it
//                  (SampleMessage.postLoadGc); the retained sampler is stopped right after that
//                  GC and written as heap-retained-<pid>-<tid>.heapprofile
//   flush          send the last sample/gc/growth, stop and write any running profile, then
//                  exactly one `bye` per thread (after its `profile` messages). A blocked main
//                  thread cannot send its last sample: the worker sends `bye` after ~500 ms anyway.
//   phase          informational.
// A connection that opens after a control message was sent missed it: the CLI replays the
// current state to connections that open late (the `target`, and `profile-start` until its
// `profile-stop`, run/agent-server.ts), with the original `seq`.
//
// This file holds types and constants only: the agent is bundled separately into CJS and
// the CLI imports these types, so the two sides share one definition.

// Changes since the lead's draft (all additive, optional; owner: the agent):
//   - connections: a target thread may use two (see above); bye once per thread.
//   - HelloMessage: may be sent again with isClusterPrimary: true once the process forks.
//   - ListenMessage.clusterPrimary: the listen is a cluster primary's shared handle.
//   - SampleMessage.dropped: messages dropped because the socket was full.
//   - CallStack, and `stack` on every growth entry; routes' `site` skips framework frames.
//   - maxListenersDisabled[].value: number | null (null = Infinity; JSON has no Infinity).
//   - StallMessage.cause: the hottest stacks of the blocked thread during the stall.
//   - ProfileMessage.clock (profile µs <-> epoch ms) and ProfileMessage.samples.
//   - SampleMessage.http.closing / closeHeader; GrowthMessage.closeHeaderSites.
//   - control `target`; SampleMessage.http.drivenOnly and SampleMessage.httpOther. An agent
//     that does not know `target` ignores it and counts every server, as a CLI that never
//     sends it leaves every server counted: readers tell the two apart by `drivenOnly`.
//   - GrowthMessage.handles; GrowthMessage.timers[].promise and .awaited.
//   - AgentConfig.secret and AuthMessage: a connection opens with the run's secret (issue 23.2).
//   - SampleMessage.unanswered (requests never answered, by route, with their handler).
//   - PrimaryMessage: a cluster primary's own stream (role 'cluster-primary'), never a `sample`.
//   - ByeMessage.code: the exit code of a process that exits (reason 'exit'), for the CLI to
//     tell how a served process it did not spawn ended (a watcher's child: src/run/served-end.ts).
//   - ByeMessage.cause: who called process.exit(), or the uncaught error (agent/exit-cause.ts).

export const PROTOCOL_VERSION = 1;

/** Environment variables the CLI sets for the target (and its children inherit). */
export const ENV = {
  /** Path of the per-run Unix socket. */
  socket: 'HOTPATH_SOCKET',
  /** The run directory, where the agent writes profile files. */
  runDir: 'HOTPATH_RUN_DIR',
  /** JSON of AgentConfig. */
  config: 'HOTPATH_AGENT_CONFIG',
} as const;

export interface AgentConfig {
  /** Telemetry interval in ms (default 100). */
  intervalMs: number;
  /** CPU profile sampling interval in µs (default 1000; never below 100). */
  cpuSamplingIntervalUs: number;
  /** Collect allocation sampling (heap profile including GC-collected objects). */
  heap: boolean;
  /** Growth hooks: listeners, routes, timers, sync APIs. */
  hooks: boolean;
  /**
   * Without `heap`, sample the heap anyway with each profile, sparsely (LIGHT_HEAP_SAMPLING in
   * inspector-profiler.ts): enough to name who allocates and who keeps memory (default true).
   */
  heapSample: boolean;
  /**
   * This run will ask for a CPU profile (profile-start): the agent worker primes V8's profiler at
   * listen, so the first start's one-time work falls before the load (profiling/profiler-prime.ts).
   * Absent (older CLIs, the benchmarks' sinks): no priming.
   */
  profile?: boolean;
  /**
   * This run's secret: every connection opens with an AuthMessage carrying it, or the CLI
   * drops it (another local process posing as an agent). Never sent in any other message.
   */
  secret?: string;
}

/** The first line of every connection when the config has a secret (not an AgentMessage: never recorded). */
export interface AuthMessage {
  v: number;
  type: 'auth';
  pid: number;
  threadId: number;
  secret: string;
}

interface Envelope {
  v: typeof PROTOCOL_VERSION;
  pid: number;
  threadId: number;
  /** Sender's wall clock, epoch ms with sub-ms fraction (performance.timeOrigin + performance.now()). */
  t: number;
}

export interface HelloMessage extends Envelope {
  type: 'hello';
  ppid: number;
  argv: string[];
  execArgv: string[];
  cwd: string;
  nodeVersion: string;
  isMainThread: boolean;
  /** cluster.worker.id in a cluster worker; undefined otherwise. */
  clusterWorkerId?: number;
  /**
   * A process only becomes a cluster primary when it forks: the first hello says false, and
   * the agent sends hello again with true once the process has forked a cluster worker
   * (a later hello of the same pid/threadId replaces the earlier one).
   */
  isClusterPrimary: boolean;
}

export interface ListenMessage extends Envelope {
  type: 'listen';
  /** `address()` of the server that started listening. */
  address: string;
  port?: number;
  family?: string;
  /** Unix socket or named pipe path, when the server listens on one. */
  pipe?: string;
  /** The server's timeouts in ms, read at listen time (HTTP servers only). */
  server?: {
    kind: 'http' | 'https' | 'net';
    keepAliveTimeout?: number;
    headersTimeout?: number;
    requestTimeout?: number;
    /** Added (agent): `server.maxRequestsPerSocket` when set (node closes a connection after that many requests). */
    maxRequestsPerSocket?: number;
  };
  /**
   * Added (agent): true when this is a cluster primary's shared listening handle (the primary
   * accepts and hands connections to its workers, which send their own `listen` for the same
   * port and serve the requests). The primary is still sampled: it is on the connection path.
   */
  clusterPrimary?: boolean;
}

/** Summary of an interval histogram in ms. */
export interface HistogramSummary {
  count: number;
  min: number;
  mean: number;
  max: number;
  p50: number;
  p90: number;
  p99: number;
}

export interface SampleMessage extends Envelope {
  type: 'sample';
  /** Length of the interval this sample covers, ms. */
  intervalMs: number;
  /** Event-loop delay over the interval, resolution subtracted, ms. */
  eld: HistogramSummary;
  /** Event-loop utilization over this interval, 0..1. */
  elu: number;
  /**
   * CPU time used in this interval, µs: the process, and this thread when node measures it
   * (`threadUser`/`threadSystem`, process.threadCpuUsage: Node 23.9+ and later 22s). Added
   * (agent): `threadOnCpu`, a main thread's on-CPU time where node does not measure it, read by
   * its agent worker from /proc on Linux (worker/loop-thread-cpu.ts); refreshed every 200 ms, so
   * an interval may carry the next one's, and only sums over several intervals are exact.
   */
  cpu: { user: number; system: number; threadUser?: number; threadSystem?: number; threadOnCpu?: number };
  /** Bytes. heap* are this thread's isolate; rss is the process. */
  mem: { rss: number; heapUsed: number; heapTotal: number; external: number; arrayBuffers: number };
  /** Active resources by type (process.getActiveResourcesInfo()). */
  resources: Record<string, number>;
  /** Added in v1 (agent): messages this connection dropped so far because the socket was full. */
  dropped?: number;
  /** Added in v1 (agent): this interval's GCs, counted whether or not the `gc` observer was on. */
  gc?: SampleGc;
  /**
   * Added (agent): requests started in the interval on this thread's servers that listen on
   * another port or path than the driven one (control `target`); absent when none. They are in
   * no figure of `http`.
   */
  httpOther?: number;
  /**
   * Added in v1 (agent): this sample was taken right after the full GC the agent worker forced
   * once the load was over (the run's flush, HeapProfiler.collectGarbage; main threads with an
   * agent worker only): `mem` and `heapAfter`, the heap used outside the young generation (the
   * measure of `gc.heapAfterFull`), are what the app still holds with no request in flight.
   * `gcMs`: how long the GC took to answer. At most one such sample per flush; none when the
   * main thread was stuck or the GC did not answer within 1 s.
   */
  postLoadGc?: { gcMs: number; heapAfter: number };
  /**
   * Added (agent): requests of the driven server that never got a response, seen when their
   * connection closed with them still waiting or still waiting at the flush, by route
   * (cumulative; sent when it changed). See collectors/unanswered-routes.ts.
   */
  unanswered?: UnansweredRoute[];
  /**
   * Added (agent): the agent's own CPU in the interval, µs (docs/agent.md, Cost): `mainUs`, its
   * callbacks on this thread (timers timed each time, per-request paths one call in 64);
   * `workerUs`, its agent worker (thread CPU on node 23.9+, else the worker loop's active time);
   * `profilerUs`, V8's profiler threads (Linux; main threads only). Absent from older agents.
   */
  agent?: { mainUs: number; workerUs?: number; profilerUs?: number };
  /** Server-side HTTP over the interval (absent before the thread serves HTTP). */
  http?: {
    started: number;
    finished: number;
    /** Requests in flight at the end of the interval. */
    active: number;
    /** New connections accepted in the interval. */
    connections: number;
    /** Connections open at the end of the interval. */
    openConnections: number;
    /**
     * Server latency from request start to response finish, ms: of every request, or of a random
     * sample of them when the thread serves more than 2,000 a second (`latency.count` timed).
     */
    latency: HistogramSummary;
    statusCodes: Record<string, number>;
    /** Requests served on a connection that had already served one (keep-alive reuse). */
    reused: number;
    /** Connections closed in the interval, and how many requests each had served. */
    closed: number;
    requestsPerClosedConnection: number;
    /** Responses after which the server closed the connection (absent when none). */
    closing?: number;
    /**
     * Of those, the ones the app closed: the client asked to keep the connection (HTTP/1.1,
     * no `Connection: close`) and node had no reason of its own (maxRequestsPerSocket), so the
     * app set `Connection: close` (or `shouldKeepAlive = false`).
     */
    closeHeader?: number;
    /**
     * Added (agent): true once the CLI named the driven server (control `target`): these figures
     * leave out the thread's servers that listen on another port or path (see `httpOther`).
     * Absent: every HTTP server of the thread is counted (an older agent, or before `target`).
     */
    drivenOnly?: true;
  };
}

/**
 * GCs in one sample interval. The `gc` messages list the GCs seen while the GC observer was
 * on (`observedMs` of the interval); every full GC is counted, observed or not (by a canary
 * object that only a full GC collects).
 */
export interface SampleGc {
  /** How long the GC observer was on during the interval, ms: `gc` events cover that time only. */
  observedMs: number;
  /** Full (mark-compact) GCs in the interval (two within a few ms may count once). */
  full: number;
  /** The heap used outside the young generation after each of those full GCs (read by a task soon after it: what was promoted since is included), bytes, with epoch ms. */
  heapAfterFull?: { t: number; bytes: number }[];
}

export type GcKind = 'minor' | 'major' | 'incremental' | 'weakcb';

/** A GC seen by the `gc` PerformanceObserver (only while it is on: see SampleGc.observedMs). */
export interface GcEvent {
  kind: GcKind;
  /** Epoch ms. */
  start: number;
  durationMs: number;
  flags: number;
  /**
   * Heap used after the GC, bytes: sent by agents before the full-GC canary (SampleGc), on the
   * last non-minor GC of an observer delivery, read then; the analysis uses it for such runs
   * only. The canary's `heapAfterFull` replaced it.
   */
  heapAfter?: number;
}

export interface GcMessage extends Envelope {
  type: 'gc';
  events: GcEvent[];
}

/** A call site: the first frame outside node internals and the agent. */
/** Requests that never got a response, for one method and route. */
export interface UnansweredRoute {
  method: string;
  /**
   * The framework's route pattern when one matched (Express `req.route.path`, with its mount
   * path), else the URL path without its query, its id segments (numbers, UUIDs, long hex) as `:id`.
   */
  route: string;
  /** True when `route` is a framework's pattern. */
  pattern?: boolean;
  count: number;
  /** Age of the oldest such request when it was seen (ms), when its start was timed. */
  oldestMs?: number;
  /**
   * The last function known to have handled them: the one a router last handed them to (Express,
   * connect, polka), else the matched route's last handler, else the server's 'request' listener; where V8 says it is defined (1-based line and column; the
   * script id is the isolate's, a CPU profile of the same thread gives its URL).
   */
  handler?: { name: string; scriptId: string; line: number; column: number };
  /** The handler is the server's 'request' listener (no framework route matched). */
  listener?: boolean;
  /** What the handler is to its framework, when the framework tells (hooks/last-handler.ts StampKind). */
  handlerKind?: 'middleware' | 'hook' | 'handler';
}

export interface CallSite {
  function: string;
  /** Absolute path or URL as V8 reports it. */
  file: string;
  line: number;
  column: number;
  /**
   * Added (agent): where the enclosing function starts (1-based, V8's CallSite
   * getEnclosingLineNumber/ColumnNumber), so a source map can give the function's original
   * name in bundled or minified code; absent where V8 does not say.
   */
  functionLine?: number;
  functionColumn?: number;
}

/**
 * Added (agent): every growth entry with a `site` may also carry `stack`, the first few frames
 * outside node internals and the agent (site === stack[0]), so an analyzer can skip frames in
 * node_modules (e.g. express's application.js) and name the user's caller.
 */
export type CallStack = CallSite[];

export interface GrowthMessage extends Envelope {
  type: 'growth';
  /** Listener counts by emitter and event, with the site that last added one. Cumulative totals. */
  /**
   * Listener additions after listen, per emitter class and event, counted when they leave an
   * emitter with two or more listeners for the event (one listener is no leak, and skipping
   * those keeps node's per-response socket listener cheap). `count` is the largest listener
   * count seen on one emitter of that class for that event (growth shows here), `added` those
   * additions since listen, `site` the adding call site sampled at the latest new maximum.
   * `current`: the listeners that emitter holds now, at this report (absent once it was
   * garbage-collected): a leak keeps them, listeners that only pile up while many requests are
   * in flight (a pipe per live stream, a waiter per pending call) are gone again.
   * Added (agent), with `current`: `maxListeners`, that emitter's limit for the
   * MaxListenersExceededWarning now (null = Infinity; 0 or null: no warning), `maxListenersOwn`,
   * whether it is the emitter's own (setMaxListeners) rather than `events.defaultMaxListeners`,
   * and `maxListenersSite`, where its own limit was lifted when the max-listeners hook saw it.
   * Added (agent): `once`, the listener added at the latest new maximum came through once()
   * (events.once or emitter.once): it waits for an event that has not come.
   */
  listeners: {
    emitter: string;
    event: string;
    count: number;
    added: number;
    current?: number;
    site?: CallSite;
    stack?: CallStack;
    once?: boolean;
    maxListeners?: number | null;
    maxListenersOwn?: boolean;
    maxListenersSite?: CallSite;
  }[];
  /**
   * Where setMaxListeners(0|Infinity) or events.defaultMaxListeners = Infinity happened (at any
   * time, also before listen). `what`: 'events.defaultMaxListeners', 'EventEmitter.setMaxListeners'
   * or '<Class>.setMaxListeners'. Without a site when only seen by polling (e.g. set from ESM).
   * `value` is 0, or null for Infinity (JSON has no Infinity: the agent's Infinity arrives as null).
   */
  maxListenersDisabled: { what: string; value: number | null; site?: CallSite; stack?: CallStack }[];
  /**
   * Routes and middleware registered after listen. Cumulative totals per (framework, method,
   * path, site). method: an HTTP method in upper case, 'ALL', 'USE' (middleware) or 'ROUTE'.
   * stackSize: the router's stack (layers) length after the latest registration.
   * site: the first frame outside the framework's own files (express, router, @koa/router,
   * koa, restify...), i.e. the code that called app.get/router.use; `stack` keeps them all.
   */
  routes: { framework: string; method: string; path: string; count: number; site?: CallSite; stack?: CallStack; stackSize?: number }[];
  /**
   * Timers created after listen, by creation site (sampled 1 in `weight` under heavy timer use;
   * counts are scaled). `delayMs`: the delays the created timers asked for, summed (ms; node's
   * 1 ms for none or less), so `delayMs / created` is their mean delay.
   */
  /**
   * Added (agent): `promise`, timers made through `timers/promises` (`setTimeout`, `setInterval`;
   * a timeout counts as fired once its delay has run out, as cleared when its signal aborted; an
   * interval is pending until its iterator returns or its signal aborts); `awaited`, timers whose
   * callback is a promise's resolve function (`new Promise((r) => setTimeout(r, ms))`): a sleep,
   * awaited by the code that called the function creating it.
   */
  timers: {
    site?: CallSite;
    stack?: CallStack;
    created: number;
    cleared: number;
    fired: number;
    pending: number;
    kind: 'timeout' | 'interval';
    delayMs?: number;
    promise?: boolean;
    awaited?: boolean;
  }[];
  /** Synchronous APIs called while a request was in flight, e.g. api 'crypto.pbkdf2Sync'. */
  syncCalls: { api: string; count: number; totalMs: number; site?: CallSite; stack?: CallStack }[];
  /**
   * Added (agent): outgoing HTTP requests (node:http and fetch/undici) started while a request
   * was in flight, by kind ('http', 'fetch', or 'undici' for the npm package, added later), target origin and call site: `count` started,
   * `completed` answered (or failed), `totalMs` from start to response headers (or error) of
   * the completed ones. Absent in older run directories. `newConnections` (node:http only, added
   * later): answered calls whose request went out on a new connection (a socket still
   * connecting or that had read nothing when node handed it to the request).
   * Added later (node:http only): `queued`, calls their agent left in its queue (every socket
   * under its limit busy); `socketWaitMs`, the part of `totalMs` from the call to the socket
   * (`http.client.request.start`); `maxSockets`, the agent's socket limit when finite. For
   * every kind, `concurrencyMs`: ms spent with 0, 1, 2... of the site's calls in flight (index
   * = calls; the last index counts that many or more, at most 16), up to the last start or
   * completion.
   */
  outgoing?: {
    api: string;
    origin: string;
    count: number;
    completed: number;
    totalMs: number;
    newConnections?: number;
    queued?: number;
    socketWaitMs?: number;
    maxSockets?: number;
    concurrencyMs?: number[];
    site?: CallSite;
    stack?: CallStack;
  }[];
  /**
   * Added (agent): where the app set a `Connection: close` response header (setHeader, or a
   * headers object passed to writeHead), sampled for a short while once the HTTP collector saw
   * such responses. Cumulative counts of the calls seen while sampling, per site.
   */
  closeHeaderSites?: { count: number; site: CallSite; stack?: CallStack }[];
  /**
   * Added (agent): handles the app opened after listen, by API and call site: `api` is
   * 'fs.watch', 'net.connect' (also net.createConnection), 'tls.connect', 'dgram.createSocket'
   * or 'child_process.spawn' (fork, exec, execFile); `resource`, the type
   * process.getActiveResourcesInfo() lists them as (FSEventWrap, TCPSocketWrap, PipeWrap,
   * UDPWrap, ProcessWrap). `created` since listen; `open`, those still open at this report;
   * `unref`, the open ones that are unref'd (`persistent: false`, `.unref()`): they keep no loop
   * alive and the active resources do not list them; `untracked`, created but not followed (the
   * tracked set was full, or an object whose state cannot be read: a recursive fs.watch).
   */
  handles?: {
    api: string;
    resource: string;
    created: number;
    open: number;
    unref?: number;
    untracked?: number;
    site?: CallSite;
    stack?: CallStack;
  }[];
  /**
   * Added (agent): commands written on the app's own client sockets (net.Socket / tls sockets it
   * `connect`ed: database and cache drivers; not node:http's or undici's, which `outgoing` times)
   * while a request was in flight, by remote (`host:port`, a pipe's path, '?' while still
   * connecting) and call site: `count` writes, `completed` answered, `totalMs` from each answered
   * write to the arrival of the chunk that answered it (paired by order; one chunk answers as
   * many writes as its size holds answers of the size seen alone), `concurrencyMs` as for
   * `outgoing` (the site's writes waiting for an answer).
   * Added (agent): `newConnections`, writes that were the first on their socket (a connection
   * opened for the command: a client made per request), and `connectSite` / `connectStack`, where
   * the first such socket was connected, when that was on the request path.
   */
  socketWaits?: {
    remote: string;
    count: number;
    completed: number;
    totalMs: number;
    concurrencyMs?: number[];
    site?: CallSite;
    stack?: CallStack;
    newConnections?: number;
    connectSite?: CallSite;
    connectStack?: CallStack;
  }[];
  /**
   * Added (agent): AsyncLocalStorage instances enabled after listen (counted once, at their first
   * `run` or `enterWith`), by the call site of that first call: `enabled` is how many. One instance
   * for the process is the norm; one per request is a leak that slows every await on Node 20-22.
   */
  asyncStorages?: { enabled: number; site?: CallSite; stack?: CallStack }[];
  /**
   * Added (agent): messages sent to a child process over its IPC channel (`child.send`) or to a
   * worker thread (`worker.postMessage`) while a request was in flight, by target ('child process
   * <script>', 'worker thread') and call site: `count` sent, `completed` answered, `totalMs` from
   * each answered send to the next 'message' the target emitted (paired by order), `concurrencyMs`
   * as for `outgoing` (the site's sends waiting for an answer).
   */
  messageWaits?: {
    target: string;
    count: number;
    completed: number;
    totalMs: number;
    concurrencyMs?: number[];
    site?: CallSite;
    stack?: CallStack;
  }[];
}

export interface StallMessage extends Envelope {
  type: 'stall';
  /** The main thread missed heartbeats from `start` (epoch ms) for `durationMs`. */
  start: number;
  durationMs: number;
  /** True while the stall is still going on (sent again with the final duration). */
  ongoing: boolean;
  /**
   * Added (agent): on the final message, when the agent worker could sample the blocked
   * thread: the hottest stacks during the stall (leaf first, up to 3, by sample share). Also
   * on the `ongoing` message sent at a flush while the thread is still blocked (the stacks so
   * far): a loop that never comes back gets no final message.
   * `line`: the leaf's line with the most samples (1-based), where V8 ran it: inside a function
   * that V8 inlined into the leaf, that function's line.
   */
  cause?: { share: number; stack: CallStack; line?: number }[];
  /**
   * Added (agent): the block overlapped the agent's own work on the main thread, V8 building
   * the profiles the agent had just stopped (a heap profile with collected objects takes
   * hundreds of ms), or the full GC it forces after the load (`post-load-gc`, see
   * SampleMessage.postLoadGc): not the app's. Analyzers and the report leave such stalls out.
   * The stop of the allocation sampler in the middle of a `--heap` load (profile-start's
   * heapRetainedFrom) is sent this way whatever its length (`profile-stop`, from the stop's request
   * to its answer): the loop-delay figures leave out the samples it overlaps. So is the full GC
   * forced in the middle of the load (`mid-load-gc`, profiling/mid-load-gc.ts), and the priming
   * of V8's profiler at listen (`profiler-prime`, profiling/profiler-prime.ts).
   */
  byAgent?: 'profile-stop' | 'post-load-gc' | 'call-counts' | 'mid-load-gc' | 'profiler-prime';
  /**
   * Added (agent): with `byAgent: 'mid-load-gc'`, the heap used outside the young generation read
   * right after that GC (synchronous: nothing promoted since, unlike the canary's reading).
   */
  heapAfter?: number;
  /**
   * Added (agent, Linux, a process's main thread): the CPU time the blocked thread got
   * (/proc/self/task/<tid>/schedstat) from the watchdog's check that saw the stall to its last
   * check that found it still stalled, `threadCpuOverMs` of wall time. A thread blocked by its
   * own work runs all along (CPU ≈ wall); one the machine kept off the cores gets little
   * (preempted: starvation, not a block).
   */
  threadCpuMs?: number;
  threadCpuOverMs?: number;
}

export interface ProfileMessage extends Envelope {
  type: 'profile';
  /**
   * `heap-retained` (added, agent): the heap sampler restarted at the control's `heapRetainedFrom`
   * without keeping collected objects and stopped right after the post-load GC: what was
   * allocated from then on and is still alive with the load over (`start`: the restart).
   */
  kind: 'cpu' | 'heap' | 'heap-retained';
  /** File name inside the run directory. */
  file: string;
  /** Epoch ms of the profiled window. */
  start: number;
  end: number;
  /**
   * Added (agent), CPU profiles: the profile's own monotonic clock (its startTime/endTime, µs)
   * at `start`/`end`; any profile timestamp tUs maps to epoch ms start + (tUs - profileStartUs) / 1000.
   */
  clock?: { profileStartUs: number; profileEndUs: number };
  /** Added (agent): samples in a CPU profile, or sampled allocations in a heap profile. */
  samples?: number;
}

/**
 * Added (agent): the telemetry of a cluster primary, sent every interval once the process has
 * forked a cluster worker (collectors/primary-sampler.ts). A stream of its own, never a
 * `sample`: the primary serves no request, and analyses of the app's threads (targets, CPU
 * profiles, loop delay) never see it. Read-only measures: the primary is not profiled.
 */
export interface PrimaryMessage extends Envelope {
  type: 'primary';
  role: 'cluster-primary';
  intervalMs: number;
  /** Process CPU in the interval, µs (the primary's agent starts no thread of its own). */
  cpu: { user: number; system: number };
  /** The agent's own callbacks in the interval, µs (in `cpu` too). */
  agentUs: number;
  elu: number;
  eld: HistogramSummary;
  mem: { rss: number; heapUsed: number; heapTotal: number };
  /**
   * Accepted TCP sockets the primary held at the end of the interval (`TCPSocketWrap` in
   * process.getActiveResourcesInfo()): under round-robin scheduling, connections it accepted
   * and has not yet handed to a worker (round_robin_handle's queue) or not yet closed after
   * the hand-off.
   */
  heldSockets: number;
  /**
   * Connections handed to a worker in the interval, by cluster worker id: the worker's answer
   * to each hand-off (`accepted: true`), seen as an `internalMessage` of its ChildProcess. Zero
   * under SCHED_NONE, where the workers accept on their own.
   */
  handedOff: Record<string, number>;
  /** Hand-offs a worker refused in the interval (it was closing): the primary queued them again. */
  refused?: number;
  /** Live cluster workers at the end of the interval. */
  workers: number;
  /** cluster.schedulingPolicy: 1 = SCHED_NONE, 2 = SCHED_RR. */
  schedulingPolicy?: number;
  /** Where the app called cluster.fork() first (sent once, on the first message). */
  forkSite?: CallStack;
}

export interface ErrorMessage extends Envelope {
  type: 'agent-error';
  /** What the agent failed to do (never thrown into user code). */
  what: string;
  message: string;
}

/**
 * Added (agent worker): the call-count window opened (V8's counters were reset) at `start`, epoch
 * ms; the CLI counts the requests it holds from then (src/run/call-count-window.ts).
 */
export interface CallWindowMessage extends Envelope {
  type: 'call-window';
  start: number;
}

/**
 * Added (agent worker): it follows the main thread's exceptions from `start`, epoch ms (after the
 * CLI's `watch-throws`; agent/profiling/throw-watch.ts); the CLI drives the extra load from then.
 */
export interface ThrowWatchMessage extends Envelope {
  type: 'throw-watch';
  start: number;
}

export interface ByeMessage extends Envelope {
  type: 'bye';
  reason: 'flush' | 'exit';
  /** With reason 'exit': the code the process exits with (1 for an uncaught exception). */
  code?: number;
  /** Added (agent), with reason 'exit': what the agent saw end the process (agent/exit-cause.ts). */
  cause?: ExitCause;
}

/** How a process ended, as its agent saw it at its 'exit' event. */
export interface ExitCause {
  /**
   * The frames that called process.exit() (app and dependencies; node internals and the agent
   * left out), innermost first: JS code was on the stack of the 'exit' event. Absent when the
   * event loop ran out or Node itself ended the process (an uncaught exception).
   */
  exitCall?: CallSite[];
  /**
   * The last error no handler took, from `uncaughtExceptionMonitor`: Node's origin for it and the
   * first lines of its stack as V8 (or a source-map support) wrote it, or its String() when it has none.
   */
  uncaught?: { origin: 'uncaughtException' | 'unhandledRejection'; stack: string[] };
}

export type AgentMessage =
  | HelloMessage
  | ListenMessage
  | SampleMessage
  | GcMessage
  | GrowthMessage
  | StallMessage
  | ProfileMessage
  | ErrorMessage
  | CallWindowMessage
  | ThrowWatchMessage
  | ByeMessage
  | PrimaryMessage;

/**
 * Commands from the CLI to every connected agent. `seq` (set by the CLI's broadcast, rising)
 * lets a thread that gets a command twice, directly and forwarded, act on it once.
 */
interface ControlBase {
  v: typeof PROTOCOL_VERSION;
  type: 'control';
  seq?: number;
}
export type ControlMessage =
  | (ControlBase & { cmd: 'target'; port?: number; pipe?: string })
  | (ControlBase & { cmd: 'phase'; phase: RunPhase })
  /**
   * `heapRetainedFrom` (added, CLI; with config.heap): epoch ms at which the agent restarts the
   * heap sampler without keeping collected objects (ProfileMessage kind `heap-retained`).
   */
  /**
   * `callCountFrom`, `callCountUntil` (added, CLI; with a load of known duration): epoch ms of
   * the short window right after the load, while the CLI drives more load that is not measured,
   * in which the agent counts calls per function (agent/profiling/call-counts.ts; written as
   * `calls-<pid>-<tid>.json`). `callCountUntil` is the latest the window is read: the CLI sends
   * `call-count-read` as soon as the window holds enough requests (src/run/call-count-window.ts).
   */
  | (ControlBase & { cmd: 'profile-start'; heapRetainedFrom?: number; callCountFrom?: number; callCountUntil?: number })
  | (ControlBase & { cmd: 'profile-stop' })
  | (ControlBase & { cmd: 'flush' })
  /** Added (CLI): read the call-count window now (it opened and holds enough requests); ignored before it opened. */
  | (ControlBase & { cmd: 'call-count-read' })
  /**
   * Added (CLI): the measured load left requests unanswered; follow the exceptions the main thread
   * throws until the flush (agent/profiling/throw-watch.ts, written as `throws-<pid>-<tid>.json`).
   */
  | (ControlBase & { cmd: 'watch-throws' });

export type RunPhase = 'starting' | 'setup' | 'warmup' | 'load' | 'cooldown' | 'stopping';
