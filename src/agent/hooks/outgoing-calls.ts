// Outgoing HTTP requests started while a request is in flight on this thread, by kind, origin
// and call site: how many, and how long each waited for its response (from the call to the
// response headers, or to the error). The io-wait analyzer names the code that waits on a slow
// upstream from these.
//
// The call site needs a patch: node:http publishes `http.client.request.start` only once the
// request is flushed to a connected socket, when no app frame is left on the stack. So
// http(s).request/get and the global fetch are wrapped (syncBuiltinESMExports for ESM imports);
// completion of node:http requests is observed on the published `http.client.response.finish`
// and `http.client.request.error` channels (subscribed at the first timed call), fetch's when
// its promise settles. Outside a request each wrapper is one test and a direct call.
// For node:http a completed response also tells whether its request went out on a new
// connection (`request.reusedSocket` false): calls that never reuse one pay a handshake each.
import * as dc from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import type { GrowthBody, GrowthHook } from './growth-hooks.js';
import { threadState } from '../thread-state.js';
import { SiteCounter, withSite, type SiteEntry } from './site-counter.js';
import { defineLike } from './wrap.js';

interface Data { origin: string; api: string; completed: number; totalMs: number; newConnections: number }
interface Pending { entry: SiteEntry<Data>; t0: number }
interface HttpClientRequest { host?: string; protocol?: string; reusedSocket?: boolean; getHeader?(name: string): unknown }
type Fn = (this: unknown, ...args: unknown[]) => unknown;

export class OutgoingCalls implements GrowthHook {
  private readonly sites = new SiteCounter<Data>(() => ({ origin: '', api: '', completed: 0, totalMs: 0, newConnections: 0 }));
  private readonly pending = new WeakMap<object, Pending>();
  private subscribed = false;

  install(): void {
    for (const name of ['http', 'https']) {
      const mod = require(`node:${name}`) as Record<string, unknown>;
      for (const fn of ['request', 'get']) if (typeof mod[fn] === 'function') mod[fn] = this.wrapHttp(mod[fn] as Fn);
    }
    (require('node:module') as { syncBuiltinESMExports(): void }).syncBuiltinESMExports();
    const g = globalThis as { fetch?: Fn };
    if (typeof g.fetch === 'function') g.fetch = this.wrapFetch(g.fetch);
  }

  /**
   * node:http completions, subscribed at the first call timed on the request path: until then
   * node builds no channel message for the target's other outgoing requests.
   */
  private subscribe(): void {
    this.subscribed = true;
    const done = (answered: boolean) => (message: unknown): void => {
      const req = (message as { request?: HttpClientRequest } | null)?.request;
      const p = req ? this.pending.get(req) : undefined;
      if (!req || !p) return;
      this.pending.delete(req);
      this.complete(p);
      if (answered && req.reusedSocket === false) p.entry.data.newConnections++;
    };
    dc.subscribe('http.client.response.finish', done(true));
    dc.subscribe('http.client.request.error', done(false));
  }

  contribute(into: GrowthBody): void {
    const out = (into.outgoing ??= []);
    for (const e of this.sites.entries.values()) {
      const row: NonNullable<GrowthBody['outgoing']>[number] = { api: e.data.api, origin: e.data.origin, count: e.count, completed: e.data.completed, totalMs: Math.round(e.data.totalMs * 1000) / 1000 };
      if (e.data.api === 'http') row.newConnections = e.data.newConnections;
      out.push(withSite(row, e));
    }
  }

  private onPath(): boolean {
    return threadState.listening && threadState.activeRequests > 0 && threadState.agentBusy === 0;
  }

  private start(api: string, origin: string, skip: Function): Pending | undefined {
    try {
      const entry = this.sites.hit(`${api} ${origin}`, skip);
      if (entry === undefined) return undefined;
      entry.data.api = api;
      entry.data.origin = origin;
      return { entry, t0: performance.now() };
    } catch {
      return undefined;
    }
  }

  private complete(p: Pending): void {
    p.entry.data.completed++;
    p.entry.data.totalMs += performance.now() - p.t0;
  }

  private wrapHttp(original: Fn): Fn {
    const self = this;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      const req = original.apply(this, args);
      if (!self.onPath() || typeof req !== 'object' || req === null) return req;
      const p = self.start('http', httpOrigin(req as HttpClientRequest), wrapper);
      if (p === undefined) return req;
      if (!self.subscribed) self.subscribe();
      self.pending.set(req, p);
      return req;
    };
    defineLike(wrapper, original);
    return wrapper;
  }

  private wrapFetch(original: Fn): Fn {
    const self = this;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      const result = original.apply(this, args);
      if (!self.onPath() || !(result instanceof Promise)) return result;
      const p = self.start('fetch', fetchOrigin(args[0]), wrapper);
      if (!p) return result;
      // Returning the chained promise (not handling the original) keeps an unhandled rejection unhandled.
      return result.then((r) => { self.complete(p); return r; }, (e: unknown) => { self.complete(p); throw e; });
    };
    defineLike(wrapper, original);
    return wrapper;
  }
}

function httpOrigin(r: HttpClientRequest): string {
  let host: unknown;
  try {
    host = typeof r.getHeader === 'function' ? r.getHeader('host') : undefined;
  } catch {
    host = undefined;
  }
  return `${r.protocol ?? 'http:'}//${typeof host === 'string' ? host : r.host ?? '?'}`;
}

function fetchOrigin(input: unknown): string {
  try {
    const url = typeof input === 'string' || input instanceof URL ? new URL(input) : new URL((input as { url: string }).url);
    return url.origin;
  } catch {
    return '?';
  }
}
