// `run()`: one whole hotpath run, the programmatic side of `hotpath run`.
//
//   create run dir ─ start agent socket ─ spawn target (agent preloaded) ─ wait for listen
//     ─ setup ─ warm-up ─ load (profile-start … profile-stop) ─ collect profiles ─ flush
//     ─ stop target group (SIGTERM, SIGKILL after grace) ─ meta.json, load.json ─ reports
//
// Every path out, including errors and Ctrl-C, stops the target's whole process group and
// leaves a run directory that says how the run ended.

import { randomBytes } from 'node:crypto';
import { basename, join } from 'node:path';
import { PROTOCOL_VERSION } from '../agent/protocol.js';
import type { LoadResult } from '../load/load-result.js';
import { DEFAULT_DURATION_S } from '../load/load-options.js';
import {
  CALL_COUNT_POLL_MS,
  CALL_COUNT_TAIL_MS,
  callCountLoadMs,
  callCountReadable,
  callCountWindow,
  loopBusyEnough,
  requestsInWindows,
  type CallCountWindow,
} from './call-count-window.js';
import { THROW_WATCH_MIN_MS, throwWatchOpened } from './throw-watch-window.js';
import type { Report } from '../report/report-schema.js';
import { writeReports } from '../report/write-reports.js';
import { readRunDir } from '../profile/read-run.js';
import { RUN_FILES, type RunMeta } from '../run-dir/schema.js';
import { writeLoadResult, writeMeta, writeMetaSync } from '../run-dir/write-run-files.js';
import { AgentServer } from './agent-server.js';
import { collectAgents } from './collect-agents.js';
import { driveLoad, type DrivePhase } from './drive-load.js';
import { agentBundlePath } from './node-options.js';
import { PhaseLog } from './phase-log.js';
import { agentWarnings, otherPorts, otherPortsWarning, portOwners, processesSeen, profilesWritten } from './run-meta.js';
import { resolveRunOptions, type ResolvedRunOptions } from './resolve-run-options.js';
import type { RunOptions } from './run-options.js';
import { startRunDir } from './start-run-dir.js';
import { strayProcesses, strayWarning, stopStrays } from './stray-processes.js';
import { redactUrl } from '../redact.js';
import { TargetProcess } from './target-process.js';
import { targetAddress } from './target-address.js';
import { waitForListen } from './wait-for-listen.js';
import { describeExit, ENDED_STDERR_LINES, endedOutcome, failureOutcome, interruptedOutcome, refusedWhileRunning } from './run-outcome.js';
import { withEnvFileNodeOptions } from './env-file-options.js';
import { servingPeers, watchServedEnd, type ServedAddress, type ServedEnd } from './served-end.js';
import { nativeTargets, NativeRecording } from './native-recording.js';
import { settledServers } from './settled-servers.js';

export interface RunHooks {
  /** Stops the run gracefully (the first Ctrl-C): load stops, everything is collected and written. */
  signal?: AbortSignal;
  /** Stops at once (the second Ctrl-C): the target group is killed, meta.json written, nothing awaited. */
  killSignal?: AbortSignal;
  /** Called as soon as the run directory exists. */
  onRunDir?(dir: string): void;
  /** Progress for people. */
  onStatus?(message: string): void;
  onLoadProgress?(second: number, requests: number): void;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface RunResult {
  runDir: string;
  meta: RunMeta;
  load?: LoadResult;
  report?: Report;
  /** The diagnosis failed (a bug in hotpath); the run directory is complete without reports. */
  reportError?: Error;
}

/**
 * Where in the load window (0..1) the agents restart the heap sampler without keeping collected
 * objects (--heap): the first half gives the allocation profile (who allocates, garbage included:
 * gc-pressure), the second half what is still alive after the load (a leak's growth: memory-leak).
 * Halfway keeps JIT and cache warm-up out of the retained view and leaves both views enough samples.
 */
export const HEAP_RETAINED_FROM = 0.5;

/** Time the agents get to write their profiles and confirm their last telemetry (bye). */
const COLLECT_WAIT_MS = 5000;

class Interrupted extends Error {
  constructor() {
    super('interrupted');
  }
}

export async function run(input: RunOptions, hooks: RunHooks = {}): Promise<RunResult> {
  const options = resolveRunOptions(input, hooks.cwd ?? process.cwd());
  const session = new RunSession(options, hooks);
  return session.start();
}

class RunSession {
  private dir = '';
  private meta!: RunMeta;
  private readonly phases: PhaseLog;
  private agents?: AgentServer;
  private target?: TargetProcess;
  private load?: LoadResult;
  /** Set when the target ended on its own during the run. */
  private targetEnded = false;
  /** The served process ended while the process hotpath spawned (its launcher) ran on (served-end.ts). */
  private servedEnd?: ServedEnd;
  /** Set once hotpath itself starts stopping the target. */
  private stopping = false;
  /** When the agents count calls after the load (sent with profile-start), until the extra load is driven. */
  private callCount: (CallCountWindow & { loadStart: number }) | undefined;
  /** profile-start was sent and profile-stop not yet. */
  private profiling = false;
  /** The final meta.json is on disk. */
  private metaWritten = false;
  private readonly warnings: string[] = [];
  /** --native: perf's recording of the target (native-recording.ts). */
  private native?: NativeRecording;

  constructor(
    private readonly options: ResolvedRunOptions,
    private readonly hooks: RunHooks,
  ) {
    this.phases = new PhaseLog((phase) => this.agents?.broadcast({ v: PROTOCOL_VERSION, type: 'control', cmd: 'phase', phase }));
  }

  private status(message: string): void {
    this.hooks.onStatus?.(message);
  }

  async start(): Promise<RunResult> {
    const agentPath = this.options.url ? '' : agentBundlePath();
    const { dir, meta } = await startRunDir(this.options);
    this.dir = dir;
    this.meta = meta;
    this.hooks.onRunDir?.(dir);
    const killed = new Promise<RunResult>((resolve) => this.onKill(resolve));
    return Promise.race([this.main(agentPath), killed]);
  }

  /** Second Ctrl-C: kill the group now, write what we know synchronously, resolve at once. */
  private onKill(resolve: (r: RunResult) => void): void {
    const k = this.hooks.killSignal;
    if (!k) return;
    k.addEventListener(
      'abort',
      () => {
        this.target?.killNow();
        for (const p of this.agents?.peers ?? []) this.native?.seen(p.pid);
        this.native?.killNow();
        // Processes of the target's session outside its group (stray-processes.ts) go with it.
        if (this.agents && this.target) {
          for (const s of strayProcesses(this.agents.peers, this.target.pid).filter((x) => x.inSession)) {
            try {
              process.kill(s.pid, 'SIGKILL');
            } catch {
              /* gone */
            }
          }
        }
        this.agents?.removeSocket();
        // Once the final meta.json is written (reports were being built), it already tells the truth.
        if (!this.metaWritten) {
          this.finishMeta({ status: 'interrupted', reason: 'Killed at once by a second Ctrl-C' });
          try {
            writeMetaSync(this.dir, this.meta);
          } catch {
            /* nothing more can be done */
          }
        }
        resolve({ runDir: this.dir, meta: this.meta, load: this.load });
      },
      { once: true },
    );
  }

  private async main(agentPath: string): Promise<RunResult> {
    let outcome: RunMeta['outcome'];
    let failure: unknown;
    try {
      outcome = this.options.url ? await this.driveUrl() : await this.driveTarget(agentPath);
    } catch (err) {
      failure = err instanceof Interrupted || this.hooks.signal?.aborted ? undefined : err;
      outcome = failure ? failureOutcome(failure, this.target?.stderrTail()) : interruptedOutcome(this.phases.phases);
    } finally {
      await this.shutdown();
    }
    if (this.targetEnded && outcome.status === 'completed') {
      const served = this.servedEnd;
      // More lines than a failure's: a heap out of memory prints V8's native stack under its message.
      const tail = this.target?.stderrTail(ENDED_STDERR_LINES);
      outcome = served
        ? endedOutcome(served.exit, this.phases.phases, tail, servedProcess(served))
        : endedOutcome(this.target?.exitStatus, this.phases.phases, tail);
    }
    this.finishMeta(outcome);
    await this.mergeNative();
    await writeMeta(this.dir, this.meta);
    this.metaWritten = true;
    if (this.load) await writeLoadResult(this.dir, this.load);
    if (failure) throw failure;
    const result: RunResult = { runDir: this.dir, meta: this.meta, load: this.load };
    try {
      result.report = await writeReports(this.dir, { run: await readRunDir(this.dir) });
    } catch (err) {
      // What was measured is on disk; `hotpath report <dir>` can retry once hotpath is fixed.
      result.reportError = err instanceof Error ? err : new Error(String(err));
    }
    return result;
  }

  private async driveTarget(agentPath: string): Promise<RunMeta['outcome']> {
    // Only this run's agents may report: the secret reaches them in HOTPATH_AGENT_CONFIG, never a file.
    const secret = randomBytes(32).toString('hex');
    this.agents = await AgentServer.start(join(this.dir, RUN_FILES.telemetry), undefined, secret);
    this.phases.enter('starting');
    // `node --env-file=.env`: the file's NODE_OPTIONS are kept beside the agent's (env-file-options.ts).
    const env = withEnvFileNodeOptions(this.hooks.env ?? process.env, this.options.command, this.options.cwd);
    if (this.options.native) this.native = new NativeRecording(env, (m) => this.status(m));
    this.target = await TargetProcess.start({
      command: this.options.command,
      cwd: this.options.cwd,
      env: this.native?.targetEnv(env) ?? env,
      agentPath,
      socketPath: this.agents.path,
      runDir: this.dir,
      logFile: join(this.dir, RUN_FILES.log),
      graceMs: this.options.grace * 1000,
      agentConfig: {
        intervalMs: this.options.interval,
        cpuSamplingIntervalUs: this.options.cpuInterval,
        heap: this.options.heap,
        hooks: this.options.hooks,
        heapSample: true,
        profile: this.options.profile,
        secret,
      },
    });
    this.meta.spawnedPid = this.target.pid;
    this.native?.seen(this.target.pid);
    this.status(`started \`${this.options.command.join(' ')}\` (pid ${this.target.pid}); waiting for it to listen`);
    const { listen, peer } = await waitForListen(this.agents, this.target, {
      port: this.options.port,
      timeoutMs: this.options.readyTimeout * 1000,
      signal: this.hooks.signal,
    });
    const address = targetAddress(listen, this.options.path);
    // --native: perf attaches to the processes serving the port now, and records the load only.
    // A cluster's workers listen one after the other: perf waits until their set stops growing.
    const agents = this.agents;
    const served: ServedAddress = address.socket !== undefined ? { pipe: address.socket } : { port: listen.port };
    if (this.native?.usable)
      await this.native.attach(await settledServers(() => nativeTargets(agents.peers, listen.port), this.hooks.signal), this.dir);
    else if (agents.peers.some((p) => p.hello?.isClusterPrimary === true || p.listens.some((l) => l.clusterPrimary === true)))
      // A cluster: the load starts once its workers have listened (settled-servers.ts), so the
      // connections it opens spread over all of them.
      await settledServers(() => servingPeers(agents.peers, served).map((p) => p.pid), this.hooks.signal);
    // From here on the agents count only this server's requests in their HTTP figures.
    this.agents.setTarget(served);
    this.meta.target = { url: address.url, pid: peer.pid, port: listen.port };
    this.meta.nodeVersion = peer.hello?.nodeVersion;
    this.status(
      `pid ${peer.pid} listens on ${address.label}${address.tls ? ' (HTTPS; its certificate is not verified: hotpath started it and reaches it on this machine)' : ''}`,
    );
    // Verifying the certificate of the server hotpath started cannot succeed and protects
    // nothing (docs/run.md, HTTPS): the load engine skips it, as with --insecure.
    try {
      await this.drive(address.url, address.socket, address.tls ? { insecure: true } : {}, served);
    } catch (err) {
      throw this.target.exitStatus === undefined ? refusedWhileRunning(err, peer.pid, address.label) : err;
    }
    return { status: 'completed' };
  }

  private async driveUrl(): Promise<RunMeta['outcome']> {
    this.meta.target = { url: redactUrl(this.options.url as string) };
    this.meta.nodeVersion = process.version;
    await this.drive(this.options.url as string, this.options.socket);
    return { status: 'completed' };
  }

  /** Setup, warm-up and load, stopped early by Ctrl-C or by the target's end. */
  private async drive(
    url: string,
    socket: string | undefined,
    overrides: { insecure?: boolean } = {},
    served?: ServedAddress,
  ): Promise<void> {
    if (this.hooks.signal?.aborted) throw new Interrupted();
    const stop = new AbortController();
    const onAbort = () => stop.abort(new Interrupted());
    this.hooks.signal?.addEventListener('abort', onAbort, { once: true });
    void this.target?.exited.then(() => {
      if (this.stopping) return;
      this.targetEnded = true;
      this.status('the target ended during the run; stopping load');
      stop.abort(new Interrupted());
    });
    // A watcher's or process manager's child that serves can end while its launcher runs on.
    const unwatch =
      served && this.agents && this.target
        ? watchServedEnd(this.agents, served, this.target.pid, (end) => {
            if (this.stopping) return;
            this.servedEnd = end;
            this.targetEnded = true;
            this.status(`the served process (pid ${end.pid}) ${describeExit(end.exit)} while its launcher runs on; stopping load`);
            stop.abort(new Interrupted());
          })
        : undefined;
    const onPhase = (phase: DrivePhase, at: number) => this.onDrivePhase(phase, at);
    try {
      this.load = await driveLoad({
        url,
        socket,
        options: { ...this.options, ...overrides },
        setupRequests: this.options.setupRequests,
        signal: stop.signal,
        onPhase,
        onProgress: this.hooks.onLoadProgress,
      });
      await this.driveCallCount(url, socket, overrides, stop.signal);
    } catch (err) {
      // Stopped early on purpose: what was measured (if anything) was returned or is lost; not a failure.
      if (!stop.signal.aborted) throw err;
    } finally {
      unwatch?.();
      this.hooks.signal?.removeEventListener('abort', onAbort);
      // The user's interrupt wins over whatever the load did (an error included).
      // eslint-disable-next-line no-unsafe-finally
      if (this.hooks.signal?.aborted) throw new Interrupted();
    }
  }

  /**
   * After the measured load, a little more of the same load, not measured, while the agents count
   * calls per function (call-count-window.ts). Its failure costs only the counts.
   */
  private async driveCallCount(
    url: string,
    socket: string | undefined,
    overrides: { insecure?: boolean },
    signal: AbortSignal,
  ): Promise<void> {
    const window = this.callCount;
    this.callCount = undefined;
    if (window === undefined || signal.aborted) return;
    // Requests the measured load left unanswered: the agents follow the exceptions thrown in the
    // extra load (agent/profiling/throw-watch.ts), where the requests it leaves unanswered are dropped.
    const hung = this.load !== undefined && this.load.requests.inFlightAtEnd + this.load.errors.timeouts > 0;
    // No thread's loop was busy enough for a finding that uses the counts and no request was left
    // unanswered: no extra load (the agents' window then counts an idle server, and the analysis finds no requests in it).
    if (!hung && !loopBusyEnough(this.agents?.peers ?? [], window.loadStart)) return;
    // The extra load starts once the agents follow the exceptions (their workers may still be
    // writing the profiles): a hung path stalls a connection for good, so the first drops count.
    if (hung) {
      this.agents?.broadcast({ v: PROTOCOL_VERSION, type: 'control', cmd: 'watch-throws' });
      await throwWatchOpened(() => this.agents?.peers ?? [], signal);
    }
    const throwsFrom = Date.now();
    const ms = callCountLoadMs(window, throwsFrom);
    if (ms <= 0) return;
    // Read as soon as the window holds enough requests (then the extra load stops CALL_COUNT_TAIL_MS
    // later), else by the agents themselves at its latest end.
    const extra = new AbortController();
    // When the extra load was stopped: the requests it leaves waiting are noted by the agents once
    // their connections close, after this (the measured load's, long before).
    let stoppedAt = throwsFrom + ms;
    const stop = () => {
      stoppedAt = Math.min(stoppedAt, Date.now());
      extra.abort();
    };
    const onAbort = stop;
    signal.addEventListener('abort', onAbort, { once: true });
    let readAt: number | undefined;
    let requestsAtRead = 0;
    let tail: NodeJS.Timeout | undefined;
    // A starved load engine can outlast its duration (its workers start late): the window's bound holds.
    const bound = setTimeout(stop, ms);
    const poll = setInterval(() => {
      const now = Date.now();
      // Past its latest end the agents read it by themselves.
      if (now >= window.until) return clearInterval(poll);
      if (!callCountReadable(this.agents?.peers ?? [], window, now)) return;
      clearInterval(poll);
      readAt = now;
      requestsAtRead = requestsInWindows(this.agents?.peers ?? [], window);
      this.agents?.broadcast({ v: PROTOCOL_VERSION, type: 'control', cmd: 'call-count-read' });
      // Exceptions are followed for THROW_WATCH_MIN_MS of extra load at least.
      tail = setTimeout(stop, hung ? Math.max(CALL_COUNT_TAIL_MS, throwsFrom + THROW_WATCH_MIN_MS - now) : CALL_COUNT_TAIL_MS);
    }, CALL_COUNT_POLL_MS);
    let extraLoad: LoadResult | undefined;
    try {
      extraLoad = await driveLoad({
        url,
        socket,
        signal: extra.signal,
        onPhase: () => {},
        options: { ...this.options, ...overrides, duration: ms / 1000, amount: undefined, warmup: 0, hdrLog: undefined },
      });
    } catch {
      // The counts are a bonus: the measured load is done.
    } finally {
      clearInterval(poll);
      clearTimeout(bound);
      if (tail !== undefined) clearTimeout(tail);
      signal.removeEventListener('abort', onAbort);
    }
    this.meta.callCountWindow = {
      from: window.from,
      until: readAt ?? window.until,
      requests: Math.round((readAt !== undefined ? requestsAtRead : requestsInWindows(this.agents?.peers ?? [], window)) * 10) / 10,
      ...(readAt === undefined ? { latest: true } : {}),
    };
    if (hung && extraLoad !== undefined)
      this.meta.throwWindow = {
        from: throwsFrom,
        answered: extraLoad.requests.total,
        unanswered: extraLoad.requests.inFlightAtEnd + extraLoad.errors.timeouts,
        until: stoppedAt,
      };
  }

  private onDrivePhase(phase: DrivePhase, at: number): void {
    if (phase === 'load-end') {
      this.phases.close(at);
      this.stopProfiling();
      this.native?.disable();
      return;
    }
    this.phases.enter(phase, at);
    if (phase === 'load' && this.options.profile) {
      const retainedFrom = this.heapRetainedFrom(at);
      const calls = this.options.amount ? undefined : callCountWindow(at, (this.options.duration ?? DEFAULT_DURATION_S) * 1000);
      this.callCount = calls ? { ...calls, loadStart: at } : undefined;
      this.agents?.broadcast({
        v: PROTOCOL_VERSION,
        type: 'control',
        cmd: 'profile-start',
        ...(retainedFrom !== undefined ? { heapRetainedFrom: retainedFrom } : {}),
        ...(calls ? { callCountFrom: calls.from, callCountUntil: calls.until } : {}),
      });
      this.profiling = true;
    }
    if (phase === 'load') this.native?.enable();
    if (phase === 'load') this.status(`load: ${this.loadDescription()}`);
  }

  /**
   * With a load of known duration, when the agents restart their heap sampler for the retained
   * view (HEAP_RETAINED_FROM of the window in; densely with --heap, sparsely otherwise: docs/agent.md);
   * undefined with --amount (no known end).
   */
  private heapRetainedFrom(loadStart: number): number | undefined {
    if (this.options.amount) return undefined;
    return loadStart + (this.options.duration ?? DEFAULT_DURATION_S) * 1000 * HEAP_RETAINED_FROM;
  }

  /** profile-stop exactly when load ends (or, when it was cut short, when collecting starts). */
  private stopProfiling(): void {
    if (!this.profiling) return;
    this.profiling = false;
    this.agents?.broadcast({ v: PROTOCOL_VERSION, type: 'control', cmd: 'profile-stop' });
  }

  private loadDescription(): string {
    const o = this.options;
    const amount = o.amount ? `${o.amount} requests` : `${o.duration ?? DEFAULT_DURATION_S} s`;
    return `${amount}, ${o.rate ? `${o.rate} req/s over ` : ''}${o.connections} connection(s)`;
  }

  /** Collect from the agents, then stop the target. Runs on every path. */
  private async shutdown(): Promise<void> {
    this.stopping = true;
    const agents = this.agents;
    if (agents && this.target) {
      this.phases.enter('cooldown');
      // A target thread that stays silent is named in meta.json's warnings (agentWarnings).
      this.stopProfiling();
      this.native?.disable();
      await collectAgents(agents, COLLECT_WAIT_MS);
      for (const p of agents.peers) this.native?.seen(p.pid);
    }
    await this.native?.stop();
    if (this.target) {
      this.phases.enter('stopping');
      const how = await this.target.stop(this.options.grace * 1000);
      if (how === 'killed')
        this.warnings.push(`the target did not exit within --grace ${this.options.grace} s of SIGTERM and was killed (SIGKILL)`);
      if (agents) await this.stopStrays(agents, this.target.pid);
    }
    this.phases.close();
    await agents?.close();
  }

  /**
   * Processes whose agent said hello and that outlived the target's group: stopped when they are
   * in the target's session, else left running; each is named in meta.json's warnings.
   */
  private async stopStrays(agents: AgentServer, targetPid: number): Promise<void> {
    const strays = strayProcesses(agents.peers, targetPid);
    if (strays.length === 0) return;
    const own = strays.filter((s) => s.inSession);
    const stopped = own.length > 0 ? await stopStrays(own, this.options.grace * 1000) : new Map<number, 'terminated' | 'killed'>();
    for (const s of strays) {
      this.warnings.push(strayWarning(s, stopped.get(s.pid)));
      this.status(
        s.inSession
          ? `stopped pid ${s.pid} (\`${s.command}\`): it loaded the agent and outlived the target's process group`
          : `pid ${s.pid} (\`${s.command}\`) loaded the agent and is still running: it detached from the target, hotpath leaves it running`,
      );
    }
  }

  /** --native: perf's samples into the run's profiles; the perf maps removed (on every path but a second Ctrl-C's, which removes them itself). */
  private async mergeNative(): Promise<void> {
    const native = this.native;
    if (!native) return;
    try {
      await native.merge(this.dir, this.meta);
    } finally {
      native.close();
      const late = native.takeWarnings();
      if (late.length > 0) this.meta.warnings = [...(this.meta.warnings ?? []), ...late];
    }
  }

  private finishMeta(outcome: RunMeta['outcome']): void {
    const exit = this.servedEnd?.exit ?? this.target?.exitStatus;
    const peers = this.agents?.peers ?? [];
    const others = otherPorts(peers, this.meta.target?.port);
    const portsWarning = otherPortsWarning(others, this.meta.target, this.options.port !== undefined, portOwners(peers));
    Object.assign(this.meta, {
      endedAt: Date.now(),
      phases: this.phases.phases,
      processes: processesSeen(peers, this.meta.target?.port),
      profiles: profilesWritten(peers),
      outcome: { ...outcome, exitCode: exit?.code ?? outcome.exitCode, signal: exit?.signal ?? outcome.signal },
      warnings: [
        ...this.warnings,
        ...(this.native?.takeWarnings() ?? []),
        ...(this.agents ? agentWarnings(this.agents, this.meta.target?.port) : []),
        ...(portsWarning !== undefined ? [portsWarning] : []),
      ],
      otherPorts: others,
    });
  }
}

/** How the outcome names a served process that ended without its launcher: pid and command. */
function servedProcess(end: ServedEnd): string {
  const command = end.argv.length > 0 ? `, \`${[basename(end.argv[0]), ...end.argv.slice(1)].join(' ')}\`` : '';
  return `pid ${end.pid}${command}, a child of the command hotpath started, which ran on`;
}
