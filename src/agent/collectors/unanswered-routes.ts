// Requests of the driven server that never got a response, by method and route, with the last
// app function known to have handled them. Nothing runs per request: a request is looked at
// only when its connection closes while it still waits (a client that timed out, the load's
// end) or when it still waits at the flush. The response on the connection (`socket._httpMessage`)
// leads to its request; the routers the agent knows stamp it with the last function they handed
// it to (hooks/last-handler.ts: Express, connect, polka; Fastify 5's route and its handler;
// hooks/framework-stamps.ts: Fastify's hooks and handlers, Koa and @koa/router, hapi, restify, Hono, whose
// own request object, kept beside the stamp, knows the route's pattern), Express also leaves the matched route on
// it (`req.route`, whose last handler took it when nothing was stamped), else the server's own
// 'request' listener is the app function that took it (plain node:http). Without a route
// pattern the route is the URL's shape (ids in its path as `:id`). Kept for at most
// MAX_UNANSWERED_ROUTES routes.
import type { UnansweredRoute } from '../protocol.js';
import { functionLocation } from './function-location.js';
import { LAST_CALL, LAST_HANDLER, fastifyRoute, lastStamp, stampKind, type StampKind } from '../hooks/last-handler.js';
import { dataValue } from '../hooks/own-data.js';

/** Distinct method + route entries kept (a server hung on every URL would fill any map). */
export const MAX_UNANSWERED_ROUTES = 20;

type Fn = (...args: never[]) => unknown;
interface Layer {
  handle?: unknown;
  name?: string;
}
interface Req {
  [LAST_HANDLER]?: unknown;
  [LAST_CALL]?: unknown;
  method?: string;
  url?: string;
  originalUrl?: string;
  baseUrl?: string;
  route?: { path?: unknown; stack?: Layer[] };
}
interface Res {
  req?: Req;
  writableEnded?: boolean;
  finished?: boolean;
}
interface ServerLike {
  listeners?: (event: string) => unknown[];
}
/** An accepted connection as node leaves it: its current response and its server. */
export interface ConnectionLike {
  _httpMessage?: unknown;
  server?: unknown;
}

const NOTED = Symbol('hotpath.unanswered');

export class UnansweredRoutes {
  private readonly routes = new Map<string, UnansweredRoute>();
  private readonly fns = new Map<string, Fn>();
  /** Script ids of the handlers located since the last takeScripts(). */
  private scripts: string[] = [];
  private changed = false;

  /**
   * `pending` requests of `socket` never got a response; `oldestMs`: how long the first has
   * waited, when known. Only the response node attached to the connection can be looked at (the
   * first in line; the others of a pipelined connection are counted with it).
   */
  note(socket: ConnectionLike, pending: number, oldestMs: number | undefined): void {
    const res = socket._httpMessage as (Res & { [NOTED]?: number }) | undefined;
    const req = res?.req;
    if (res === undefined || req === undefined || res.writableEnded === true) return;
    // Seen at the flush and again when its connection closes: counted once.
    const already = res[NOTED] ?? 0;
    if (pending <= already) return;
    res[NOTED] = pending;
    const { route, pattern, handler, listener, kind: stampedKind } = routeOf(req, socket.server as ServerLike | undefined);
    const method = req.method ?? '?';
    const key = `${method} ${route}`;
    let entry = this.routes.get(key);
    if (entry === undefined) {
      if (this.routes.size >= MAX_UNANSWERED_ROUTES) return;
      entry = { method, route, count: 0, ...(pattern ? { pattern } : {}) };
      this.routes.set(key, entry);
      if (handler !== undefined) {
        this.fns.set(key, handler);
        if (listener) entry.listener = true;
        const kind = listener ? undefined : (stampedKind ?? stampKind(handler));
        if (kind !== undefined) entry.handlerKind = kind;
      }
    }
    entry.count += pending - already;
    if (oldestMs !== undefined && oldestMs >= 0) entry.oldestMs = Math.max(entry.oldestMs ?? 0, Math.round(oldestMs));
    this.changed = true;
  }

  /** Every route so far when something changed since the last call, else undefined. Handlers are located here (once each). */
  take(): UnansweredRoute[] | undefined {
    if (!this.changed) return undefined;
    this.changed = false;
    for (const [key, fn] of this.fns) {
      const entry = this.routes.get(key);
      this.fns.delete(key);
      const loc = functionLocation(fn);
      if (entry !== undefined && loc !== undefined) {
        entry.handler = { name: fn.name.replace(/^(bound )+/, ''), ...loc };
        if (!this.scripts.includes(loc.scriptId)) this.scripts.push(loc.scriptId);
      }
    }
    return [...this.routes.values()].map((e) => ({ ...e }));
  }

  /**
   * The scripts of the handlers take() located since the last call: the agent's worker writes
   * their function ranges at the flush (the CLI finds a handler's URL there when the CPU profile
   * never sampled its script).
   */
  takeScripts(): string[] {
    const out = this.scripts;
    this.scripts = [];
    return out;
  }
}

/** The route a request took and the last app function known to have handled it. */
function routeOf(
  req: Req,
  server: ServerLike | undefined,
): { route: string; pattern: boolean; handler?: Fn; listener?: boolean; kind?: StampKind } {
  const stamped = lastStamp(req);
  const call = req[LAST_CALL];
  const known = typeof call === 'object' && call !== null ? frameworkRoute(call) : {};
  // The stamp first: a Hono function still holding the request (a middleware pending after its
  // route answered) rather than the last one Hono started (routeIndex).
  const last = (stamped.fn as Fn | undefined) ?? known.handler;
  if (known.route !== undefined) return { route: known.route, pattern: true, ...(last ? { handler: last } : {}) };
  const fastify = fastifyRoute(req);
  if (fastify !== undefined) return { route: fastify.route, pattern: true, ...(fastify.handler ? { handler: fastify.handler as Fn } : {}) };
  const handed = last !== undefined ? { handler: last, ...(stamped.kind !== undefined ? { kind: stamped.kind } : {}) } : undefined;
  const r = req.route;
  const route = r === undefined || r === null ? undefined : routePath(r.path, req.baseUrl ?? '');
  if (r && route !== undefined) {
    const stack = Array.isArray(r.stack) ? r.stack : [];
    const last = stack[stack.length - 1]?.handle;
    const handler = handed ?? (typeof last === 'function' ? { handler: last as Fn } : {});
    return { route, pattern: true, ...handler };
  }
  // A Koa context's `originalUrl`: koa-mount rewrites node's `req.url` for the mounted app.
  const callUrl = typeof call === 'object' && call !== null ? dataValue(call, 'originalUrl') : undefined;
  const url = typeof callUrl === 'string' ? callUrl : (req.originalUrl ?? req.url ?? '');
  const q = url.indexOf('?');
  const shape = urlShape(q < 0 ? url : url.slice(0, q));
  if (handed !== undefined) return { route: shape, pattern: false, ...handed };
  const listeners = typeof server?.listeners === 'function' ? server.listeners('request') : [];
  const first = listeners.find((l): l is Fn => typeof l === 'function' && !isFrameworkApp(l));
  return { route: shape, pattern: false, ...(first !== undefined ? { handler: first, listener: true } : {}) };
}

/**
 * The route's pattern a framework's request object holds, and the app function that ran last
 * when the framework keeps it (Hono): a Fastify request's route context (`config.url`), a Hono
 * context's matched routes and the index of the one running, a Koa context's `_matchedRoute` (under koa-mount's `mountPath`)
 * (@koa/router), a hapi request's `route.path`. Read only for a request left unanswered.
 */
function frameworkRoute(call: object): { route?: string; handler?: Fn } {
  try {
    const context = Object.getOwnPropertySymbols(call).find((s) => s.description === 'fastify.context');
    if (context !== undefined) {
      const url = dataValue(dataValue((call as Record<symbol, unknown>)[context], 'config'), 'url');
      return typeof url === 'string' ? { route: url } : {};
    }
    const hono = honoRoute(call);
    if (hono !== undefined) return hono;
    const matched = dataValue(call, '_matchedRoute');
    if (typeof matched === 'string' || matched instanceof RegExp) return { route: mounted(dataValue(call, 'mountPath'), String(matched)) };
    const path = dataValue(dataValue(call, 'route'), 'path');
    if (typeof path === 'string') return { route: path };
  } catch {
    // A shape not known: the URL's.
  }
  return {};
}

/**
 * A Hono context's route: its request (a lazy getter, Hono's code) knows the matched routes and
 * which ran last (`routeIndex`); the route is the last matched one that is not a wildcard
 * middleware, the handler the one that ran last (used when no wrapper stamped the request).
 */
function honoRoute(call: object): { route?: string; handler?: Fn } | undefined {
  if (!hasGetter(call, 'req')) return undefined;
  const req = (call as { req?: unknown }).req;
  const index = dataValue(req, 'routeIndex');
  const routes = typeof index === 'number' ? (req as { matchedRoutes?: unknown }).matchedRoutes : undefined;
  if (!Array.isArray(routes) || typeof index !== 'number') return undefined;
  const handler = dataValue(routes[index], 'handler');
  const paths = routes.map((r) => dataValue(r, 'path')).filter((p): p is string => typeof p === 'string');
  const route = [...paths].reverse().find((p) => !p.endsWith('*')) ?? paths.at(-1);
  return { ...(route !== undefined ? { route } : {}), ...(typeof handler === 'function' ? { handler: handler as Fn } : {}) };
}

/** A Koa route under the path koa-mount mounted its app at (`ctx.mountPath`), unless the route has it already. */
function mounted(mountPath: unknown, route: string): string {
  if (typeof mountPath !== 'string' || mountPath === '/' || mountPath === '' || route.startsWith(mountPath)) return route;
  return `${mountPath.replace(/\/$/, '')}${route}`;
}

/** A getter named `key` on `obj`'s prototype chain (a Hono context's `req`: its class's, or the subclass the agent made of it). */
function hasGetter(obj: object, key: string): boolean {
  for (
    let o = Object.getPrototypeOf(obj) as object | null, depth = 0;
    o !== null && depth < 4;
    o = Object.getPrototypeOf(o) as object | null, depth++
  ) {
    const d = Object.getOwnPropertyDescriptor(o, key);
    if (d !== undefined) return typeof d.get === 'function';
  }
  return false;
}

/**
 * A route's path as written: Express also takes an array of paths (`app.get(['/', '/r/:id'], h)`)
 * and a RegExp, and leaves it as such on `req.route.path`.
 */
function routePath(path: unknown, base: string): string | undefined {
  if (typeof path === 'string') return `${base}${path}`;
  if (path instanceof RegExp) return `${base}${String(path)}`;
  if (Array.isArray(path) && path.length > 0) {
    const parts = path.map((p) => routePath(p, base));
    return parts.every((x): x is string => x !== undefined) ? parts.join(', ') : undefined;
  }
  return undefined;
}

/** A path segment that names one record rather than a route: a number, a UUID, a long hex string. */
const ID_SEGMENT = /^(\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{12,})$/i;

/** `/invoices/42/lines` -> `/invoices/:id/lines`: requests to one route by different ids count together. */
export function urlShape(path: string): string {
  return path
    .split('/')
    .map((s) => (ID_SEGMENT.test(s) ? ':id' : s))
    .join('/');
}

/** An Express (or connect-style) app used as the listener: the framework's function, not the app's. */
function isFrameworkApp(fn: unknown): boolean {
  const f = fn as Record<string, unknown>;
  return typeof f.handle === 'function' && (typeof f.set === 'function' || typeof f.use === 'function');
}
