// Waits on client sockets: a database or cache driver (Redis, Postgres, MySQL, memcached style)
// writes a command on a long-lived, `connect`ed net.Socket and resolves the app's promise from
// its 'data' handler. The outgoing-calls hook sees HTTP and fetch only; this one times the
// commands the app writes on its own client sockets while a request is in flight, per remote
// and call site: how many, and how long until the answer came back.
//
// What it measures: from a write on the socket to the arrival of the bytes that answer it (the
// chunk node pushes into the socket's readable side, before any 'data' listener runs). Answers
// are paired with writes by order (request/response and pipelined protocols answer in order;
// every write is queued for that, those outside requests too, but only the request path's are
// counted). One chunk can carry several answers when they come back together, or part of one:
// a chunk answers as many of the oldest writes as its size holds answers of the socket's mean size
// (bytes received per write); an answer split over chunks is answered by its first (the time to
// its first byte), the chunks after it answer nothing. Chunks that arrive with no write waiting
// (pub/sub messages) answer nothing. The answers of a line protocol (one line each) are counted by
// the lines that start in a chunk instead (see answer-lines.ts): sizes no longer matter there, and
// two answers that came back in one chunk are two. A driver that writes one command in several writes
// (Postgres' Parse, Bind, Execute, Sync) is told from a socket's first writes (see Learning):
// its writes with no answer between are then one wait. Payloads are never kept: only the byte
// count of each chunk is read.
//
// Only client sockets are followed: `net.Socket.prototype.connect` is wrapped (net.connect,
// net.createConnection, tls.connect and `new net.Socket().connect()` all go through it), and a
// followed socket gets its own `write` and `push` (the prototype's are untouched, so the
// server's sockets pay nothing). Sockets that node:http's Agent or undici connects are left out
// (the outgoing-calls hook times their requests), and so are the agent's own.
// Each write on the request path costs a counter, a timestamp and an array push; its stack is
// captured for the first writes of a remote and then 1 in SOCKET_SAMPLE_EVERY (SiteCounter).
import type * as net from 'node:net';
import type { CallSite } from '../protocol.js';
import { performance } from 'node:perf_hooks';
import type { GrowthBody, GrowthHook } from './growth-hooks.js';
import { threadState } from '../thread-state.js';
import { SiteCounter, type SiteEntry } from './site-counter.js';
import { captureStack, callerFiles, isAgentFile } from './call-site.js';
import { inFlight, newLevels, waitRow, type WaitData } from './concurrency-levels.js';
import { listen, originalClearTimeout, originalSetTimeout } from '../originals.js';
import { defineLike } from './wrap.js';
import { answersByLines, newAnswerLines, type AnswerLines } from './answer-lines.js';

/** Writes left waiting on one socket at most; older ones are dropped (a socket that never answers). */
export const MAX_PENDING_WRITES = 256;
/**
 * Past the first writes to a remote, a stack is captured for 1 in this many: a driver writes
 * thousands of commands a second, and a capture (tens of µs with the async frames of an awaiting
 * loop) for 1 in 64 was most of the hook's cost.
 */
export const SOCKET_SAMPLE_EVERY = 512;
/** A socket's counts of writes and bytes received are halved when the writes reach this. */
const HALVE_AT = 4096;

interface Data extends WaitData {
  remote: string;
  /** Writes on the request path that were the first on their socket: a connection opened for them. */
  newConnections: number;
  /** Where such a socket was connected (the first one's stack, captured at its connect). */
  connectStack?: CallSite[];
}

interface Pending {
  /** Undefined for a write outside any request: kept only to pair the answers in order. */
  entry: SiteEntry<Data> | undefined;
  t0: number;
}

/**
 * Per followed socket: its writes waiting for an answer, oldest first; the writes and the bytes
 * received so far (halved now and then, so they follow the recent traffic), and the fraction of an
 * answer already received.
 */
interface SocketState {
  pending: Pending[];
  remote: string;
  /** The SiteCounter key: 'socket <remote>' ('socket ?' while the remote is not known). */
  key: string;
  writes: number;
  bytesIn: number;
  carry: number;
  /** The first and the last write since the last chunk arrived. */
  first: Pending | undefined;
  last: Pending | undefined;
  /** The client writes a command in several writes (see Learning); decided after the first writes. */
  multi: boolean;
  /** Read from the first write on, until decided (`learnt`). */
  learning: Learning | undefined;
  learnt: boolean;
  /** Every write made on the socket (none halved or dropped), and whether its answers are counted by lines. */
  made: number;
  lines: AnswerLines;
  /** Where the socket was connected, when that happened on the request path (a connection per request). */
  connectStack?: CallSite[];
}

/**
 * How a socket's client writes a command, read from its first writes (LEARN_WRITES at most): pairs
 * of writes one after another with no answer between, and how many of those were made in one
 * synchronous turn (the same callback and promise continuation) from different code: a driver
 * writing one command as several messages (Postgres' Parse, Bind, Execute, Sync) rather than
 * several commands (written by one line, or by different requests' continuations). Commands the
 * app starts together from different lines (`Promise.all([get(a), set(b)])`) are written the same
 * way; they are told apart by their answers: a run of writes answered by as many answers as it has
 * writes was that many commands (each got its own answer), and its pairs are not counted as one
 * command's. An answer is a chunk, or a line of a line protocol's chunk (a store that answers two
 * commands read together in one write sends two lines); a run answered in one chunk of a protocol
 * whose answers are not lines tells nothing more.
 */
export interface LearningCounts {
  writes: number;
  pairs: number;
  oneCommand: number;
  /** The run of writes with no answer between that the last write belongs to: its writes, and its pairs counted in oneCommand. */
  run: number;
  runOneCommand: number;
  /** Answers (chunks, or lines of a line protocol) that came since the run ended. */
  answers: number;
}

/** The learning's counts at a socket's first write. */
export const newLearningCounts = (): LearningCounts => ({ writes: 0, pairs: 0, oneCommand: 0, run: 0, runOneCommand: 0, answers: 0 });

/**
 * One write in the counts: `follows`, no answer came since the write before it; `oneTurn`, it was
 * made in the same turn as that one, from different code. A write that starts a run closes the
 * run before it, whose answers have come by then.
 */
export function countWrite(l: LearningCounts, follows: boolean, oneTurn: boolean): void {
  l.writes++;
  if (follows) {
    l.pairs++;
    l.run++;
    if (oneTurn) {
      l.oneCommand++;
      l.runOneCommand++;
    }
    return;
  }
  // As many answers as writes: the run was several commands.
  if (l.run >= 2 && l.answers >= l.run) l.oneCommand -= l.runOneCommand;
  l.run = 1;
  l.runOneCommand = 0;
  l.answers = 0;
}

/** A chunk that answered writes: one answer, or as many as the lines that start in it (a line protocol's). */
export function countAnswer(l: LearningCounts, answers = 1): void {
  l.answers += answers;
}

/** The socket's client writes a command as several writes: enough pairs, nearly all one command's. */
export function isMultiWrite(l: LearningCounts): boolean {
  return l.pairs >= LEARN_PAIRS && l.oneCommand >= l.pairs * MULTI_WRITE_SHARE;
}

interface Learning extends LearningCounts {
  /** The last write's stack (file:line:column of each frame), callback and continuation. */
  stack: string;
  /** The timer that decides the socket after LEARN_MS if it is still learning. */
  timer?: ReturnType<typeof setTimeout>;
  asyncId: number;
  turn: number;
}

type Fn = (this: unknown, ...args: unknown[]) => unknown;

const newData = (): Data => ({
  remote: '',
  newConnections: 0,
  completed: 0,
  totalMs: 0,
  ...newLevels(),
});

/** Connects made by node's HTTP client or undici: their requests are the outgoing-calls hook's. */
const httpClientFile = (file: string): boolean =>
  file === 'node:_http_agent' ||
  file === 'node:_http_client' ||
  file === 'node:https' ||
  file.startsWith('node:internal/deps/undici') ||
  /[\\/]node_modules[\\/]undici[\\/]/.test(file);

/** Frames of the connect's own plumbing, looked past to find who asked for the socket. */
const connectPlumbing = (file: string): boolean => file === 'node:net' || file === 'node:_tls_wrap' || file === 'node:tls';

export class SocketWaits implements GrowthHook {
  private readonly sites = new SiteCounter<Data>(newData, SOCKET_SAMPLE_EVERY);

  install(): void {
    const proto = (require('node:net') as typeof net).Socket.prototype as unknown as Record<string, unknown>;
    const connect = proto.connect as Fn;
    const self = this;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      const out = connect.apply(this, args);
      // After node's connect, which puts the prototype's write back on the socket.
      if (threadState.agentBusy === 0 && typeof this === 'object' && this !== null) self.follow(this as net.Socket, wrapper);
      return out;
    };
    defineLike(wrapper, connect);
    proto.connect = wrapper;
  }

  contribute(into: GrowthBody): void {
    const out = (into.socketWaits ??= []);
    for (const e of this.sites.entries.values()) {
      const connects = e.data.newConnections > 0 ? { newConnections: e.data.newConnections } : {};
      const at = e.data.connectStack ? { connectSite: e.data.connectStack[0], connectStack: e.data.connectStack } : {};
      out.push(waitRow({ remote: e.data.remote }, e, { ...connects, ...at }));
    }
  }

  /** Gives a socket being connected its own write and push, unless an HTTP client connects it. */
  private follow(socket: net.Socket, skip: Function): void {
    try {
      const own = socket as unknown as Record<string | symbol, unknown>;
      const followed = own[FOLLOWED] as { st: SocketState; write: Fn } | undefined;
      if (followed !== undefined) {
        // Connected again: node put the prototype's write back, and the old connection's writes wait no more.
        own.write = followed.write;
        this.abandon(followed.st, followed.st.pending.length);
        followed.st.remote = '';
        followed.st.key = 'socket ?';
        return;
      }
      // Who asked for the socket: past node's connect plumbing and the agent's own wrappers (the
      // handle hook wraps net.connect). Only agent frames: the agent's own connection.
      const files = callerFiles(skip, 12);
      const asker = files.find((f) => !connectPlumbing(f) && !isAgentFile(f));
      if (asker === undefined ? files.some(isAgentFile) : httpClientFile(asker)) return;
      const st: SocketState = {
        pending: [],
        remote: '',
        key: 'socket ?',
        writes: 0,
        bytesIn: 0,
        carry: 0,
        first: undefined,
        last: undefined,
        multi: false,
        learning: undefined,
        learnt: false,
        made: 0,
        lines: newAnswerLines(),
      };
      // Connected while a request is in flight: kept to name where connections are opened per request.
      if (this.onPath()) {
        const stack = captureStack(skip).filter((f) => !connectPlumbing(f.file));
        if (stack.length > 0) st.connectStack = stack;
      }
      const self = this;
      const write = socket.write as unknown as Fn;
      const writeWrapper = function (this: unknown): unknown {
        self.sent(socket, st, writeWrapper);
        return write.apply(this, arguments as unknown as unknown[]);
      };
      defineLike(writeWrapper, write);
      own.write = writeWrapper;
      own[FOLLOWED] = { st, write: writeWrapper };
      const push = socket.push as unknown as Fn;
      const pushWrapper = function (this: unknown, chunk: unknown): unknown {
        self.answered(st, chunk);
        return push.apply(this, arguments as unknown as unknown[]);
      };
      defineLike(pushWrapper, push);
      own.push = pushWrapper;
      // Writes a closed socket never answered wait no more.
      listen(socket, 'close', () => {
        self.abandon(st, st.pending.length);
        if (st.learning !== undefined) stopLearning(st);
      });
    } catch {
      // Never break a connect.
    }
  }

  private onPath(): boolean {
    return threadState.listening && threadState.activeRequests > 0 && threadState.agentBusy === 0;
  }

  /**
   * A write: a command that waits for its answer. Counted at its site on the request path; any
   * other write is only queued, so that the answers stay paired with their writes in order.
   */
  private sent(socket: net.Socket, st: SocketState, skip: Function): void {
    try {
      if (threadState.agentBusy > 0) return;
      st.made++;
      if (!st.learnt) learn(st, (st.learning ??= startLearning(st)), skip);
      // The rest of a command a multi-write client is writing: it waits with its first write.
      if (st.multi && st.last !== undefined) return;
      let entry: SiteEntry<Data> | undefined;
      if (this.onPath()) {
        if (st.remote === '') {
          const remote = remoteOf(socket);
          if (remote !== undefined) {
            st.remote = remote;
            st.key = `socket ${remote}`;
          }
        }
        entry = this.sites.hit(st.key, skip);
        if (entry !== undefined) {
          entry.data.remote = st.remote === '' ? '?' : st.remote;
          // The socket's first write: the command went out on a connection opened for it.
          if (st.made === 1) {
            entry.data.newConnections++;
            if (st.connectStack !== undefined) entry.data.connectStack ??= st.connectStack;
          }
        }
      }
      const t0 = performance.now();
      if (++st.writes >= HALVE_AT) {
        st.writes /= 2;
        st.bytesIn /= 2;
      }
      if (entry !== undefined) inFlight(entry.data, 1, t0);
      if (st.pending.length >= MAX_PENDING_WRITES) this.abandon(st, 1);
      st.last = { entry, t0 };
      st.first ??= st.last;
      st.pending.push(st.last);
    } catch {
      // Never break a write.
    }
  }

  /**
   * A chunk arrived: it answers the oldest writes waiting, as many as it holds answers. A line
   * protocol's chunk holds the lines that start in it (answer-lines.ts); any other's, by size. Every write
   * gets one answer, so an answer is, on average, the bytes received per write: a chunk holds its
   * size over that many, rounded, the difference carried to the next chunk (up to half an answer
   * ahead, one behind) so that the pairing does not drift. A chunk that starts an answer answers at
   * least one write (the wait is to the answer's first byte); one that goes on with an answer begun
   * in an earlier chunk (the carry is at least PARTIAL_ANSWER below zero) may answer none. Chunks
   * that arrive with nothing waiting (pub/sub messages) answer nothing. The mean is read over all
   * writes, those still waiting included: it reads an answer a little short while many wait (the
   * first exchanges of a client that writes many commands before the first answer), and a pairing
   * that fell behind leaves more writes waiting, which shortens it and lets the pairing catch up.
   */
  private answered(st: SocketState, chunk: unknown): void {
    try {
      const bytes = chunkBytes(chunk);
      if (bytes === 0) return;
      const waiting = st.pending.length;
      const byLines = answersByLines(st.lines, chunk, waiting, st.made);
      if (st.learning !== undefined && waiting > 0) countAnswer(st.learning, byLines ?? 1);
      st.first = st.last = undefined;
      st.bytesIn += bytes;
      if (waiting === 0) {
        st.carry = 0;
        return;
      }
      if (byLines !== undefined) {
        st.carry = 0;
        this.complete(st, Math.min(waiting, byLines));
        return;
      }
      const held = st.carry + (bytes * st.writes) / st.bytesIn;
      const n = Math.min(waiting, Math.max(st.carry < 0 ? 0 : 1, Math.round(held)));
      // Short of the answers paired by less than PARTIAL_ANSWER: shorter answers, not one going on.
      const carry = held - n > -PARTIAL_ANSWER && held - n < 0 ? 0 : held - n;
      st.carry = Math.max(-1, Math.min(0.5, carry));
      this.complete(st, n);
    } catch {
      // Never break a read.
    }
  }

  /** The `n` oldest writes waiting got their answer. */
  private complete(st: SocketState, n: number): void {
    if (n === 0) return;
    const now = performance.now();
    for (const p of st.pending.splice(0, n)) {
      if (p.entry === undefined) continue;
      p.entry.data.completed++;
      p.entry.data.totalMs += now - p.t0;
      inFlight(p.entry.data, -1, now);
    }
  }

  /** Drops the `n` oldest writes waiting, unanswered. */
  private abandon(st: SocketState, n: number): void {
    st.first = st.last = undefined;
    const now = performance.now();
    for (const p of st.pending.splice(0, n)) if (p.entry !== undefined) inFlight(p.entry.data, -1, now);
  }
}

const FOLLOWED = Symbol('hotpath.socketWaits');

/** A socket's first writes read for how its client writes a command, at most. */
export const LEARN_WRITES = 64;
/** Pairs of writes (one after another, no answer between) that decide it. */
export const LEARN_PAIRS = 8;
/** The share of those pairs written in one turn from different code that makes a command a run of writes. */
export const MULTI_WRITE_SHARE = 0.9;
/**
 * A socket that wrote too little to decide within this long from its first write (a pub/sub
 * subscriber, an idle pool member) is decided with what it has: the promise hook does not stay on.
 */
export const LEARN_MS = 5000;

/**
 * Promise continuations run one after another in one callback (a chunk resolving several requests'
 * commands wakes them all): a promise hook counts them while a socket learns (from its first write
 * until decided or closed), and only then. Where node has no promise hooks, the callback alone
 * tells turns apart.
 */
let turn = 0;
let learners = 0;
let stopTurns: (() => void) | undefined;

function startLearning(st: SocketState): Learning {
  const l: Learning = { ...newLearningCounts(), stack: '', asyncId: -1, turn: -1 };
  // Cleared when the socket is decided or closed: a client made per request opens and closes a
  // socket per request, and a timer left for LEARN_MS per socket kept each one's objects alive
  // that long (3.3 KB per request at 800 requests a second read as a heap leak).
  l.timer = originalSetTimeout(() => {
    if (st.learning === l) decide(st, l);
  }, LEARN_MS);
  l.timer.unref();
  if (learners++ === 0) {
    try {
      const hooks = (require('node:v8') as typeof import('node:v8')).promiseHooks as typeof import('node:v8').promiseHooks | undefined;
      stopTurns = hooks?.onBefore(() => {
        turn++;
      }) as (() => void) | undefined;
    } catch {
      stopTurns = undefined;
    }
  }
  return l;
}

/** Ends a socket's learning (decided, or closed before): the promise hook stops with the last one. */
function stopLearning(st: SocketState): void {
  if (st.learning?.timer !== undefined) originalClearTimeout(st.learning.timer);
  st.learning = undefined;
  st.learnt = true;
  if (--learners === 0) {
    stopTurns?.();
    stopTurns = undefined;
  }
}

/** One of a socket's first writes: compared with the one before it when no answer came between. */
function learn(st: SocketState, l: Learning, skip: Function): void {
  const stack = captureStack(skip)
    .map((f) => `${f.file}:${f.line}:${f.column}`)
    .join(' ');
  const asyncId = (require('node:async_hooks') as typeof import('node:async_hooks')).executionAsyncId();
  const follows = st.last !== undefined;
  countWrite(l, follows, follows && asyncId === l.asyncId && turn === l.turn && stack !== l.stack);
  l.stack = stack;
  l.asyncId = asyncId;
  l.turn = turn;
  if (l.writes < LEARN_WRITES && l.pairs < LEARN_PAIRS) return;
  decide(st, l);
}

/**
 * Ends a socket's learning. Once decided, a multi-write client's writes with no answer between are
 * one command: they wait as one, from the first, and the mean answer is per command from then on.
 */
function decide(st: SocketState, l: Learning): void {
  stopLearning(st);
  st.multi = isMultiWrite(l);
  if (!st.multi) return;
  // The command being written waits as one, from its first write. The writes left waiting before it
  // were the rest of commands already answered (each paired as several); the mean answer is per
  // command from now on.
  const i = st.first === undefined ? -1 : st.pending.indexOf(st.first);
  const extra = i < 0 ? st.pending.splice(0) : [...st.pending.splice(i + 1), ...st.pending.splice(0, i)];
  const now = performance.now();
  for (const p of extra) {
    if (p.entry === undefined) continue;
    p.entry.count--;
    inFlight(p.entry.data, -1, now);
  }
  st.last = st.first = i < 0 ? undefined : st.first;
  st.writes = st.pending.length;
  st.bytesIn = 0;
}

/**
 * A chunk short of the answers it was paired with by at least this share of an answer holds the
 * start of an answer whose rest comes in the next chunks (they answer no new write); short by
 * less, its answers were only shorter than the mean (a 14-byte answer among 11-byte ones).
 */
export const PARTIAL_ANSWER = 0.25;

function chunkBytes(chunk: unknown): number {
  if (chunk === null || chunk === undefined) return 0;
  if (typeof chunk === 'string') return chunk.length;
  const n = (chunk as { byteLength?: unknown }).byteLength;
  return typeof n === 'number' ? n : 1;
}

/** host:port of the peer (IPv6 in brackets), else the pipe's path; undefined while not known (still connecting). */
function remoteOf(socket: net.Socket): string | undefined {
  const address = socket.remoteAddress;
  const port = socket.remotePort;
  if (address !== undefined && port !== undefined) return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
  const pipe = (socket as unknown as { _pipeName?: unknown })._pipeName;
  return typeof pipe === 'string' ? pipe : undefined;
}
