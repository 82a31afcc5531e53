// Server-side HTTP over diagnostics_channel (`http.server.request.start` ->
// `http.server.response.finish`): per-request latency, status codes, connections and
// keep-alive reuse. O(1) per request, no async_hooks and no per-request allocation in the
// common case: a connection's record (a symbol-keyed property of the socket, one per
// connection, not per request) holds the start times of its requests in flight, in order —
// node finishes the responses of one HTTP/1 connection in the order their requests arrived,
// pipelined or not. A WeakMap keyed by the response is the fallback for a message without a
// socket. Latency goes into a plain-JS histogram and status codes into an array: nothing on
// the per-request path calls into C++ but the clock reads. Counts are exact; the latency of a
// random sample of the requests is timed once a thread serves more than
// LATENCY_SAMPLES_PER_SECOND (the two clock reads were most of this collector's cost per
// request: docs/agent.md, Cost), so `latency.count` is the number of requests timed.
// Requests to a server the CLI does not drive (marked by driven-server.ts) are only counted,
// apart (`httpOther`): they never enter the figures above.
import * as dc from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import type { SampleMessage } from '../protocol.js';
import { threadState } from '../thread-state.js';
import { listen } from '../originals.js';
import { ownTimeEnd, ownTimeStart } from '../own-time.js';
import { summarize } from './histogram-summary.js';
import { LogHistogram } from './log-histogram.js';
import type { EventEmitter } from 'node:events';
import { armCloseSites } from '../hooks/connection-close.js';
import { OTHER_SERVER, type MarkedServer } from '../driven-server.js';
import { UnansweredRoutes, type ConnectionLike } from './unanswered-routes.js';

const START = 'http.server.request.start';
const FINISH = 'http.server.response.finish';

type HttpStats = NonNullable<SampleMessage['http']>;
interface Response {
  statusCode?: number;
  _last?: boolean;
  maxRequestsOnConnectionReached?: boolean;
}
interface Request {
  httpVersionMinor?: number;
  headers?: Record<string, unknown>;
}
interface ChannelMessage {
  request?: Request;
  response?: Response;
  socket?: EventEmitter;
  server?: MarkedServer;
}
/** A connection: requests served, start times (ms) of those in flight, oldest first (aborted ones never finish). */
interface SocketRecord {
  served: number;
  starts: number[];
}
/** Where a socket's record lives: a property lookup, cheaper per request than a WeakMap's. */
const RECORD = Symbol('hotpath.http.connection');
type Tracked = EventEmitter & ConnectionLike & { [RECORD]?: SocketRecord };
/** Status codes below this are counted in an array; others (never sent by node) in a Map. */
const CODES = 1000;
/** Requests timed per second and thread at most: above that rate a random sample of them is. */
export const LATENCY_SAMPLES_PER_SECOND = 2000;
/** A start time that was not taken (the request is counted, not timed). */
const UNTIMED = -1;
const ALL = 2 ** 32;

export class HttpCollector {
  /** Start times of requests that came without a socket (the fallback). */
  private readonly startTimes = new WeakMap<object, number>();
  private readonly latency = new LogHistogram();
  private readonly codes = new Float64Array(CODES);
  private codesSeen: number[] = [];
  private otherCodes = new Map<number, number>();
  private started = 0;
  private finished = 0;
  private connections = 0;
  private reused = 0;
  private closed = 0;
  private closedRequests = 0;
  private openConnections = 0;
  /** Responses after which node closes the connection (`res._last`), and those closed on the app's own header. */
  private closing = 0;
  private closeHeader = 0;
  private seenAny = false;
  /** Requests started on servers that are not driven (see driven-server.ts) this interval. */
  private other = 0;
  /** Set once the CLI named the driven server: the figures leave the other servers out. */
  drivenOnly = false;
  /** A request is timed when a draw of the xorshift generator (uint32) is below this. */
  private timeBelow = ALL;
  private rng = 0x9e3779b9;
  private lastTake = performance.now();
  // A subscriber that throws would surface as an uncaught exception in the target: never let it.
  // One call in OWN_TIME_EVERY is timed as the agent's own time (own-time.ts).
  private readonly onStart = (m: unknown): void => {
    const t0 = ownTimeStart();
    try {
      this.requestStarted(m as ChannelMessage);
    } catch {
      /* counted nowhere */
    }
    ownTimeEnd(t0);
  };
  private readonly onFinish = (m: unknown): void => {
    const t0 = ownTimeStart();
    try {
      this.responseFinished(m as ChannelMessage);
    } catch {
      /* counted nowhere */
    }
    ownTimeEnd(t0);
  };
  private readonly onSocketClose: (this: Tracked) => void;
  /** Connections of the driven server(s) open now (one Set entry per connection, not per request). */
  private readonly open = new Set<Tracked>();
  /** Requests that never got a response, by route (looked at only when their connection closes or at the flush). */
  readonly unanswered = new UnansweredRoutes();

  constructor() {
    const self = this;
    // One shared function (not a closure per socket): `this` is the socket that closed.
    this.onSocketClose = function (this: Tracked) {
      const rec = this[RECORD];
      self.closed++;
      self.openConnections--;
      self.open.delete(this);
      if (rec === undefined) return;
      self.closedRequests += rec.served;
      if (rec.starts.length > 0) self.noteUnanswered(this, rec);
      threadState.activeRequests -= rec.starts.length;
      rec.starts.length = 0;
    };
  }

  start(): void {
    dc.subscribe(START, this.onStart);
    dc.subscribe(FINISH, this.onFinish);
  }

  stop(): void {
    dc.unsubscribe(START, this.onStart);
    dc.unsubscribe(FINISH, this.onFinish);
  }

  /** The interval's numbers, then reset; undefined until the thread served a request. */
  take(): HttpStats | undefined {
    if (!this.seenAny) return undefined;
    const stats: HttpStats = {
      started: this.started,
      finished: this.finished,
      active: threadState.activeRequests,
      connections: this.connections,
      openConnections: this.openConnections,
      latency: summarize(this.latency, 1e-3),
      statusCodes: this.takeCodes(),
      reused: this.reused,
      closed: this.closed,
      requestsPerClosedConnection: this.closed === 0 ? 0 : Math.round((this.closedRequests / this.closed) * 100) / 100,
      ...(this.closing > 0 ? { closing: this.closing, closeHeader: this.closeHeader } : {}),
      ...(this.drivenOnly ? { drivenOnly: true as const } : {}),
    };
    // Time a share of the next interval's requests sized from this interval's rate.
    const now = performance.now();
    const perSecond = (this.started * 1000) / Math.max(1, now - this.lastTake);
    this.lastTake = now;
    this.timeBelow = perSecond <= LATENCY_SAMPLES_PER_SECOND ? ALL : Math.floor((ALL * LATENCY_SAMPLES_PER_SECOND) / perSecond);
    this.started = this.finished = this.connections = this.reused = this.closed = this.closedRequests = 0;
    this.closing = this.closeHeader = 0;
    this.latency.reset();
    return stats;
  }

  /** Requests the thread's other servers started since the last call (they are in no other figure). */
  takeOther(): number {
    const n = this.other;
    this.other = 0;
    return n;
  }

  /** At the flush: the requests still waiting for a response on open connections are noted as unanswered. */
  noteStillWaiting(): void {
    for (const socket of this.open) {
      const rec = socket[RECORD];
      if (rec !== undefined && rec.starts.length > 0) this.noteUnanswered(socket, rec);
    }
  }

  private noteUnanswered(socket: Tracked, rec: SocketRecord): void {
    try {
      const t0 = rec.starts[0];
      this.unanswered.note(socket, rec.starts.length, t0 === UNTIMED ? undefined : performance.now() - t0);
    } catch {
      // Never into the target.
    }
  }

  /** Whether to time this request (always, below LATENCY_SAMPLES_PER_SECOND). */
  private timed(): boolean {
    if (this.timeBelow === ALL) return true;
    let x = this.rng;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.rng = x;
    return x >>> 0 < this.timeBelow;
  }

  private takeCodes(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const code of this.codesSeen) {
      out[String(code)] = this.codes[code];
      this.codes[code] = 0;
    }
    this.codesSeen = [];
    for (const [k, v] of this.otherCodes) out[String(k)] = v;
    this.otherCodes = new Map();
    return out;
  }

  private requestStarted(m: ChannelMessage): void {
    // Another server's request leaves no record, so its response finds none and is skipped too.
    if (m.server?.[OTHER_SERVER] === true) {
      this.other++;
      return;
    }
    this.seenAny = true;
    this.started++;
    threadState.activeRequests++;
    const now = this.timed() ? performance.now() : UNTIMED;
    const socket = m.socket as Tracked | undefined;
    if (socket === undefined) {
      if (m.response !== undefined) this.startTimes.set(m.response, now);
      return;
    }
    const rec = socket[RECORD];
    if (rec === undefined) {
      this.connections++;
      this.openConnections++;
      listen(socket, 'close', this.onSocketClose);
      socket[RECORD] = { served: 1, starts: [now] };
      this.open.add(socket);
    } else {
      this.reused++;
      rec.served++;
      rec.starts.push(now);
    }
  }

  /**
   * A response after which the connection closes. The app's decision (a `Connection: close`
   * header it set, through setHeader or writeHead, or `shouldKeepAlive = false`) when the client
   * asked to keep it (HTTP/1.1, no `Connection: close`) and node had no reason of its own
   * (`server.maxRequestsPerSocket` reached).
   */
  private closingResponse(res: Response, req: Request | undefined): void {
    this.closing++;
    if (req === undefined || req.httpVersionMinor !== 1 || res.maxRequestsOnConnectionReached === true) return;
    const asked = req.headers?.connection;
    if (asked !== undefined && /close/i.test(String(asked))) return;
    this.closeHeader++;
    armCloseSites();
  }

  private responseFinished(m: ChannelMessage): void {
    const res = m.response;
    if (res === undefined) return;
    const rec = (m.socket as Tracked | undefined)?.[RECORD];
    let t0: number | undefined;
    if (rec !== undefined) {
      t0 = rec.starts.shift();
    } else {
      t0 = this.startTimes.get(res);
      if (t0 !== undefined) this.startTimes.delete(res);
    }
    // Not seen starting (before listen, or its socket already closed): not counted.
    if (t0 === undefined) return;
    this.finished++;
    threadState.activeRequests--;
    if (t0 !== UNTIMED) this.latency.record(Math.round((performance.now() - t0) * 1000));
    // node closes the connection after this response (one boolean read per request otherwise).
    if (res._last === true) this.closingResponse(res, m.request);
    const code = res.statusCode ?? 0;
    if (code >= 0 && code < CODES && Number.isInteger(code)) {
      if (this.codes[code]++ === 0) this.codesSeen.push(code);
    } else {
      this.otherCodes.set(code, (this.otherCodes.get(code) ?? 0) + 1);
    }
  }
}
