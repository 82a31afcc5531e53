// Waits on messages to another process or thread: the app sends a question to a child process
// over its IPC channel (`child.send`, after `fork` or a spawn with an 'ipc' stdio) or to a worker
// thread (`worker.postMessage`) and resolves its promise from the 'message' event that answers.
// No other hook sees these round trips (the channel is no socket the app connects, no HTTP call);
// this one times the messages sent while a request is in flight, per target and call site: how
// many, and how long until an answer came back.
//
// What it measures: from a send to the next 'message' the same child or worker emits. Answers
// are paired with sends by order (a helper answering its questions in turn; a reply-less send is
// paired with the next message, like a command without an answer on a client socket; node's own
// `NODE_` messages, answered by 'internalMessage', are left out). Every send
// is queued for that, those outside requests too, but only the request path's are counted. The
// agent's own worker is never followed: its first post comes from an agent frame.
//
// How: node gives each child its `send` when it sets up the channel (inside
// `ChildProcess.prototype.spawn`), so spawn is wrapped and a child with a channel gets its own
// `send` and `emit`; a worker gets its own `emit` at its first post (`Worker.prototype.postMessage`
// is wrapped). The prototypes of other emitters are untouched. Each send on the request path costs
// a counter, a timestamp and an array push; its stack is captured for the first sends of a target
// and then 1 in SAMPLE_EVERY (SiteCounter). Messages are never read.
import { basename } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { GrowthBody, GrowthHook } from './growth-hooks.js';
import { threadState } from '../thread-state.js';
import { SiteCounter, type SiteEntry } from './site-counter.js';
import { callerFiles, isAgentFile } from './call-site.js';
import { inFlight, newLevels, waitRow, type WaitData } from './concurrency-levels.js';
import { defineLike } from './wrap.js';

/** Sends left waiting on one target at most; older ones are dropped (a target that never answers). */
export const MAX_PENDING_MESSAGES = 256;

interface Data extends WaitData {
  target: string;
}

interface Pending {
  /** Undefined for a send outside any request: kept only to pair the answers in order. */
  entry: SiteEntry<Data> | undefined;
  t0: number;
}

interface TargetState {
  pending: Pending[];
  /** 'child process <script>' or 'worker thread <script>'. */
  target: string;
}

type Fn = (this: unknown, ...args: unknown[]) => unknown;

const newData = (): Data => ({ target: '', completed: 0, totalMs: 0, ...newLevels() });

const FOLLOWED = Symbol('hotpath.messageWaits');

export class MessageWaits implements GrowthHook {
  private readonly sites = new SiteCounter<Data>(newData);

  install(): void {
    this.installChildProcess();
    this.installWorker();
  }

  contribute(into: GrowthBody): void {
    const out = (into.messageWaits ??= []);
    for (const e of this.sites.entries.values()) out.push(waitRow({ target: e.data.target }, e));
  }

  /** A child with an IPC channel gets its own `send` and `emit` once node set the channel up. */
  private installChildProcess(): void {
    const proto = (require('node:child_process') as { ChildProcess: { prototype: Record<string, unknown> } }).ChildProcess.prototype;
    const spawn = proto.spawn as Fn;
    const self = this;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      const out = spawn.apply(this, args);
      if (threadState.agentBusy === 0 && typeof this === 'object' && this !== null)
        self.followChild(this as Record<string | symbol, unknown>);
      return out;
    };
    defineLike(wrapper, spawn);
    proto.spawn = wrapper;
  }

  private installWorker(): void {
    const proto = (require('node:worker_threads') as { Worker: { prototype: Record<string, unknown> } }).Worker.prototype;
    const post = proto.postMessage as Fn;
    const self = this;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      self.workerPost(this, wrapper);
      return post.apply(this, args);
    };
    defineLike(wrapper, post);
    proto.postMessage = wrapper;
  }

  private followChild(child: Record<string | symbol, unknown>): void {
    try {
      const send = child.send;
      if (typeof send !== 'function' || child[FOLLOWED] !== undefined) return;
      const st = this.follow(child, `child process ${scriptOf(child.spawnargs, child.spawnfile)}`);
      const self = this;
      const sendWrapper = function (this: unknown, ...args: unknown[]): unknown {
        // node's own messages (cluster's `NODE_CLUSTER` hand-overs) are answered by 'internalMessage', not by 'message'.
        if (!internalMessage(args[0])) self.sent(st, sendWrapper);
        return (send as Fn).apply(this, args);
      };
      defineLike(sendWrapper, send as Fn);
      child.send = sendWrapper;
    } catch {
      // Never break a spawn.
    }
  }

  /** A post to a worker: the worker is followed at its first post, unless the agent made it. */
  private workerPost(worker: unknown, skip: Function): void {
    try {
      if (threadState.agentBusy > 0 || typeof worker !== 'object' || worker === null) return;
      const own = worker as Record<string | symbol, unknown>;
      let st = own[FOLLOWED] as TargetState | null | undefined;
      if (st === undefined) {
        const asker = callerFiles(skip, 2)[0];
        if (asker === undefined || isAgentFile(asker)) {
          own[FOLLOWED] = null;
          return;
        }
        st = this.follow(own, 'worker thread');
      }
      if (st !== null) this.sent(st, skip);
    } catch {
      // Never break a post.
    }
  }

  /** Gives a target its own `emit`: each 'message' answers the oldest send waiting. */
  private follow(target: Record<string | symbol, unknown>, name: string): TargetState {
    const st: TargetState = { pending: [], target: name };
    const emit = target.emit as Fn;
    const self = this;
    const emitWrapper = function (this: unknown, event: unknown): unknown {
      if (event === 'message') self.answered(st);
      else if (event === 'exit' || event === 'disconnect') self.abandon(st, st.pending.length);
      return emit.apply(this, arguments as unknown as unknown[]);
    };
    defineLike(emitWrapper, emit);
    target.emit = emitWrapper;
    target[FOLLOWED] = st;
    return st;
  }

  private onPath(): boolean {
    return threadState.listening && threadState.activeRequests > 0 && threadState.agentBusy === 0;
  }

  private sent(st: TargetState, skip: Function): void {
    try {
      if (threadState.agentBusy > 0) return;
      let entry: SiteEntry<Data> | undefined;
      if (this.onPath()) {
        entry = this.sites.hit(st.target, skip);
        if (entry !== undefined) entry.data.target = st.target;
      }
      const t0 = performance.now();
      if (entry !== undefined) inFlight(entry.data, 1, t0);
      if (st.pending.length >= MAX_PENDING_MESSAGES) this.abandon(st, 1);
      st.pending.push({ entry, t0 });
    } catch {
      // Never break a send.
    }
  }

  private answered(st: TargetState): void {
    try {
      const p = st.pending.shift();
      if (p?.entry === undefined) return;
      const now = performance.now();
      p.entry.data.completed++;
      p.entry.data.totalMs += now - p.t0;
      inFlight(p.entry.data, -1, now);
    } catch {
      // Never break a message.
    }
  }

  /** Drops the `n` oldest sends waiting, unanswered. */
  private abandon(st: TargetState, n: number): void {
    const now = performance.now();
    for (const p of st.pending.splice(0, n)) if (p.entry !== undefined) inFlight(p.entry.data, -1, now);
  }
}

/** A message node sends for itself over a child's channel (cluster, handle passing): `cmd` 'NODE_...'. */
function internalMessage(m: unknown): boolean {
  if (typeof m !== 'object' || m === null) return false;
  const cmd = (m as { cmd?: unknown }).cmd;
  return typeof cmd === 'string' && cmd.startsWith('NODE_');
}

/** The script a forked child runs (the last argument naming a .js/.cjs/.mjs/.ts file), else the program. */
function scriptOf(spawnargs: unknown, spawnfile: unknown): string {
  const args = Array.isArray(spawnargs) ? (spawnargs as unknown[]).filter((a): a is string => typeof a === 'string') : [];
  const script = args.slice(1).find((a) => /\.[cm]?[jt]s$/.test(a));
  if (script !== undefined) return basename(script);
  return typeof spawnfile === 'string' ? basename(spawnfile) : '?';
}
