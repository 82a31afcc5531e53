// Outgoing HTTP requests started while a request is in flight on this thread, by kind, origin
// and call site: how many, and how long each waited for its response (from the call to the
// response headers, or to the error). The io-wait analyzer names the code that waits on a slow
// upstream from these.
//
// The call site needs a patch: node:http publishes `http.client.request.start` only once the
// request has its socket, when no app frame is left on the stack. So http(s).request/get and
// the global fetch are wrapped (syncBuiltinESMExports for ESM imports); completion of node:http
// requests is observed on the published `http.client.response.finish` and
// `http.client.request.error` channels (subscribed at the first timed call), fetch's when its
// promise settles. Outside a request each wrapper is one test and a direct call.
//
// For node:http the time is split in two: waiting for a socket (from the call to
// `http.client.request.start`, which node publishes once its agent hands the request a socket:
// at once, or when a socket frees up for a request queued behind the agent's `maxSockets`) and
// on the socket (to the response headers). At the call, a request left in its agent's queue
// (`agent.requests`) counts as queued, and the agent's socket limit is kept. At the start, a
// socket still connecting or that never read a byte is a new connection: a keep-alive socket
// has read its previous response. (`request.reusedSocket` is set only when a request finds an
// idle socket at once, never for one that waited in the queue.)
//
// The npm undici package (its request, stream and fetch, a Pool or an Agent dispatching) does not
// go through node:http: its calls are seen on its diagnostics channels, `undici:request:create` on
// the caller's stack when the app dispatches, `undici:request:headers` or `undici:request:error`
// when the call completes. Node's own fetch (its bundled undici) publishes on the same channels;
// its calls are the fetch wrapper's, so a request created while the wrapper runs, or to an origin
// the wrapper has a call in flight to (fetch dispatches later, from a promise), is left alone.
//
// Per site, the time spent with 0, 1, 2... of its calls in flight (counted at each start and
// completion, so an idle site costs nothing): a site held at a few calls while many requests
// are in flight is a lock, a pool or a concurrency limit the requests queue for.
import * as dc from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import type { GrowthBody, GrowthHook } from './growth-hooks.js';
import { threadState } from '../thread-state.js';
import { SiteCounter, type SiteEntry } from './site-counter.js';
import { defineLike } from './wrap.js';
import { inFlight, newLevels, roundMs, waitRow, type WaitData } from './concurrency-levels.js';

interface Data extends WaitData {
  origin: string;
  api: string;
  newConnections: number;
  /** node:http: calls left in their agent's queue, time from the call to a socket, the agent's socket limit. */
  queued: number;
  socketWaitMs: number;
  maxSockets: number;
}
interface Pending {
  entry: SiteEntry<Data>;
  t0: number;
  socketAt?: number;
  fresh?: boolean;
}
interface SocketLike {
  connecting?: boolean;
  bytesRead?: number;
}
interface AgentLike {
  requests?: Record<string, unknown>;
  maxSockets?: number;
  maxTotalSockets?: number;
}
interface HttpClientRequest {
  host?: string;
  protocol?: string;
  socket?: SocketLike | null;
  agent?: AgentLike | null;
  getHeader?(name: string): unknown;
}
type Fn = (this: unknown, ...args: unknown[]) => unknown;

const newData = (): Data => ({
  origin: '',
  api: '',
  completed: 0,
  totalMs: 0,
  newConnections: 0,
  queued: 0,
  socketWaitMs: 0,
  maxSockets: 0,
  ...newLevels(),
});

export class OutgoingCalls implements GrowthHook {
  private readonly sites = new SiteCounter<Data>(newData);
  private readonly pending = new WeakMap<object, Pending>();
  private subscribed = false;
  /** Inside the global fetch's synchronous part: an undici request created now is fetch's. */
  private inFetch = 0;
  /** Calls of the fetch wrapper in flight, by origin: undici requests to these may be theirs. */
  private readonly fetchInFlight = new Map<string, number>();

  install(): void {
    for (const name of ['http', 'https']) {
      const mod = require(`node:${name}`) as Record<string, unknown>;
      for (const fn of ['request', 'get']) if (typeof mod[fn] === 'function') mod[fn] = this.wrapHttp(mod[fn] as Fn);
    }
    (require('node:module') as { syncBuiltinESMExports(): void }).syncBuiltinESMExports();
    const g = globalThis as { fetch?: Fn };
    if (typeof g.fetch === 'function') g.fetch = this.wrapFetch(g.fetch);
    this.watchUndici();
  }

  /** The npm undici package's calls, from its diagnostics channels (see the header). */
  private watchUndici(): void {
    const onCreate = (message: unknown): void => {
      try {
        if (this.inFetch > 0 || !this.onPath()) return;
        const req = (message as { request?: UndiciRequest } | null)?.request;
        if (req == null || typeof req !== 'object' || this.pending.has(req)) return;
        const origin = undiciOrigin(req);
        if ((this.fetchInFlight.get(origin) ?? 0) > 0) return;
        const p = this.start('undici', origin, onCreate, isUndiciFile);
        if (p !== undefined) this.pending.set(req, p);
      } catch {
        // Never break a request.
      }
    };
    const done = (message: unknown): void => {
      const req = (message as { request?: UndiciRequest } | null)?.request;
      const p = req != null && typeof req === 'object' ? this.pending.get(req) : undefined;
      if (req == null || p === undefined) return;
      this.pending.delete(req);
      this.complete(p);
    };
    dc.subscribe('undici:request:create', onCreate);
    dc.subscribe('undici:request:headers', done);
    dc.subscribe('undici:request:error', done);
  }

  /**
   * node:http socket hand-overs and completions, subscribed at the first call timed on the
   * request path: until then node builds no channel message for the target's other requests.
   */
  private subscribe(): void {
    this.subscribed = true;
    dc.subscribe('http.client.request.start', (message: unknown): void => {
      const req = (message as { request?: HttpClientRequest } | null)?.request;
      const p = req ? this.pending.get(req) : undefined;
      if (!req || !p || p.socketAt !== undefined) return;
      p.socketAt = performance.now();
      const socket = req.socket;
      p.fresh = socket != null && (socket.connecting === true || socket.bytesRead === 0);
    });
    const done =
      (answered: boolean) =>
      (message: unknown): void => {
        const req = (message as { request?: HttpClientRequest } | null)?.request;
        const p = req ? this.pending.get(req) : undefined;
        if (!req || !p) return;
        this.pending.delete(req);
        const now = this.complete(p);
        p.entry.data.socketWaitMs += (p.socketAt ?? now) - p.t0;
        if (answered && p.fresh === true) p.entry.data.newConnections++;
      };
    dc.subscribe('http.client.response.finish', done(true));
    dc.subscribe('http.client.request.error', done(false));
  }

  contribute(into: GrowthBody): void {
    const out = (into.outgoing ??= []);
    for (const e of this.sites.entries.values()) {
      const d = e.data;
      const http =
        d.api === 'http'
          ? {
              newConnections: d.newConnections,
              queued: d.queued,
              socketWaitMs: roundMs(d.socketWaitMs),
              ...(d.maxSockets > 0 ? { maxSockets: d.maxSockets } : {}),
            }
          : {};
      out.push(waitRow({ api: d.api, origin: d.origin }, e, http));
    }
  }

  private onPath(): boolean {
    return threadState.listening && threadState.activeRequests > 0 && threadState.agentBusy === 0;
  }

  private start(api: string, origin: string, skip: Function, machinery?: (file: string) => boolean): Pending | undefined {
    try {
      const entry = this.sites.hit(`${api} ${origin}`, skip, machinery, machinery !== undefined);
      if (entry === undefined) return undefined;
      entry.data.api = api;
      entry.data.origin = origin;
      const t0 = performance.now();
      inFlight(entry.data, 1, t0);
      return { entry, t0 };
    } catch {
      return undefined;
    }
  }

  /** Counts a completed call and returns the time it completed. */
  private complete(p: Pending): number {
    const now = performance.now();
    p.entry.data.completed++;
    p.entry.data.totalMs += now - p.t0;
    inFlight(p.entry.data, -1, now);
    return now;
  }

  private wrapHttp(original: Fn): Fn {
    const self = this;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      const req = original.apply(this, args);
      if (!self.onPath() || typeof req !== 'object' || req === null) return req;
      const r = req as HttpClientRequest;
      const p = self.start('http', httpOrigin(r), wrapper);
      if (p === undefined) return req;
      if (!self.subscribed) self.subscribe();
      self.pending.set(req, p);
      poolState(r, p.entry.data);
      return req;
    };
    defineLike(wrapper, original);
    return wrapper;
  }

  private wrapFetch(original: Fn): Fn {
    const self = this;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      self.inFetch++;
      let result: unknown;
      try {
        result = original.apply(this, args);
      } finally {
        self.inFetch--;
      }
      if (!self.onPath() || !(result instanceof Promise)) return result;
      const origin = fetchOrigin(args[0]);
      const p = self.start('fetch', origin, wrapper);
      if (!p) return result;
      self.fetchInFlight.set(origin, (self.fetchInFlight.get(origin) ?? 0) + 1);
      const settled = () => {
        const n = (self.fetchInFlight.get(origin) ?? 1) - 1;
        if (n > 0) self.fetchInFlight.set(origin, n);
        else self.fetchInFlight.delete(origin);
        self.complete(p);
      };
      // Returning the chained promise (not handling the original) keeps an unhandled rejection unhandled.
      return result.then(
        (r) => {
          settled();
          return r;
        },
        (e: unknown) => {
          settled();
          throw e;
        },
      );
    };
    defineLike(wrapper, original);
    return wrapper;
  }
}

/**
 * Right after the call: whether node's agent left the request in its queue (no socket under its
 * limit: it waits for one to free up), and the agent's socket limit.
 */
function poolState(req: HttpClientRequest, d: Data): void {
  try {
    const agent = req.agent;
    if (agent == null || typeof agent !== 'object') return;
    const cap = Math.min(agent.maxSockets ?? Infinity, agent.maxTotalSockets ?? Infinity);
    if (Number.isFinite(cap) && cap > 0) d.maxSockets = cap;
    const queues = agent.requests;
    if (queues == null || typeof queues !== 'object') return;
    // A queued request was just pushed: it is the last of its origin's queue.
    for (const name in queues) {
      const q = queues[name];
      if (Array.isArray(q) && q[q.length - 1] === req) {
        d.queued++;
        return;
      }
    }
  } catch {
    // Never break a request.
  }
}

function httpOrigin(r: HttpClientRequest): string {
  let host: unknown;
  try {
    host = typeof r.getHeader === 'function' ? r.getHeader('host') : undefined;
  } catch {
    host = undefined;
  }
  return `${r.protocol ?? 'http:'}//${typeof host === 'string' ? host : (r.host ?? '?')}`;
}

interface UndiciRequest {
  origin?: unknown;
}

/** The origin of an undici request (`http://host:port`, a string or a URL as the dispatcher was given). */
function undiciOrigin(req: UndiciRequest): string {
  const o = req.origin;
  if (typeof o === 'string') return o.replace(/\/+$/, '');
  if (o instanceof URL) return o.origin;
  return '?';
}

/** undici's own files (the npm package, or node's bundled copy): the call site is the first frame outside them. */
function isUndiciFile(file: string): boolean {
  return file.includes('/node_modules/undici/') || file.includes('\\node_modules\\undici\\');
}

function fetchOrigin(input: unknown): string {
  try {
    const url = typeof input === 'string' || input instanceof URL ? new URL(input) : new URL((input as { url: string }).url);
    return url.origin;
  } catch {
    return '?';
  }
}
