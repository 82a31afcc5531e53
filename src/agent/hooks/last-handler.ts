// The last function a router handed each request to, kept on the request (one symbol-keyed
// property store per handler call), so a request left unanswered can name the middleware or
// route handler that took it last (collectors/unanswered-routes.ts reads it, only for such a
// request). Express hands every layer over through one prototype method (Layer's
// `handle_request` in Express 4, `handleRequest` in the router package of Express 5), which is
// patched; connect and polka call their stacks' functions directly, so those functions are
// wrapped in place, once, when route-growth.ts finds the app. A wrapper keeps the name, length,
// properties and kind (async or not: Fastify and restify check it; Koa, which checks none, gets
// one plain wrapper) of the function it wraps (connect tells error handlers by their length,
// which are left as they are: their first argument is the error). Frameworks whose functions take their own request object (a Koa
// context, a Fastify or hapi request, a Hono context) stamp the raw request behind it and keep
// that object beside it (LAST_CALL), where the route's pattern is read
// (framework-stamps.ts patches them). Fastify 5 also publishes each route handler's call
// (`tracing:fastify.request.handler`, with the route's pattern): the raw request keeps that
// message, whose fastify request holds the route's handler (Fastify 4 publishes none).
import * as dc from 'node:diagnostics_channel';
import { defineLike } from './wrap.js';
import { dataFunction, dataValue, replaceData } from './own-data.js';

export const LAST_HANDLER = Symbol.for('hotpath.lastHandler');
/** The framework's own request object the last handler was called with, when it is not the raw request. */
export const LAST_CALL = Symbol.for('hotpath.lastCall');
/** Fastify's handler message (`{ request, reply, route: { url, method } }`) kept on the raw request. */
export const FASTIFY_CALL = Symbol.for('hotpath.fastifyCall');

/**
 * What a stamped function is to its framework, where the framework tells: a middleware (Express,
 * connect and polka `use`, a Koa app's middleware, @koa/router's `use` and a route's functions
 * before its last, Hono's before the route's handler), a hook (Fastify's `addHook` and route
 * hooks), or a route's handler. Kept per function when it is wrapped; an Express stamp is the
 * layer itself, whose kind is read from it (lastStamp), for a request left unanswered only.
 */
export type StampKind = 'middleware' | 'hook' | 'handler';
const kinds = new WeakMap<Function, StampKind>();

/** What `fn` is to its framework, when the framework tells. */
export function stampKind(fn: unknown): StampKind | undefined {
  return typeof fn === 'function' ? kinds.get(fn) : undefined;
}

/**
 * The function that took `req` last and what it is to its framework. An Express layer stamps the
 * request with itself (no work per layer call beyond the store): its handle is the function, and
 * its kind is told by the layer: one of no route and no method is `use`'s (a middleware), one of
 * a route (a route's own layers have their method) its handler; a route's dispatch layer tells
 * none (its own layers stamp the request next).
 */
export function lastStamp(req: object): { fn?: Function; kind?: StampKind } {
  const stamped = (req as Stamped)[LAST_HANDLER];
  if (typeof stamped === 'function') {
    const kind = kinds.get(stamped);
    return { fn: stamped, ...(kind !== undefined ? { kind } : {}) };
  }
  if (typeof stamped !== 'object' || stamped === null || !patchedLayers.has(Object.getPrototypeOf(stamped) as object)) return {};
  const fn = dataFunction(stamped, 'handle');
  if (fn === undefined) return {};
  if (dataValue(stamped, 'route') !== undefined) return { fn };
  return { fn, kind: dataValue(stamped, 'method') === undefined ? 'middleware' : 'handler' };
}

/** Notes what `fn` is (the first word kept: a function is wrapped once). */
function noteKind(fn: unknown, kind: StampKind | undefined): void {
  if (kind !== undefined && typeof fn === 'function' && !kinds.has(fn)) kinds.set(fn, kind);
}

const FASTIFY_HANDLER_START = 'tracing:fastify.request.handler:start';

type Fn = (this: unknown, ...args: unknown[]) => unknown;
type Stamped = Record<symbol, unknown>;

/** Wrappers made here, so a function is never wrapped twice. */
const wrappers = new WeakSet<Function>();
const patchedLayers = new WeakSet<object>();

/** The raw request (node's IncomingMessage) behind a framework's first handler argument. */
export type RawOf = (arg: object) => unknown;

const AsyncFunction = (async () => {}).constructor;

/** Stamps `raw` with the function that took it and the framework object it came in; never throws. */
export function stamp(raw: unknown, fn: unknown, call?: object): void {
  if (typeof raw !== 'object' || raw === null) return;
  try {
    (raw as Stamped)[LAST_HANDLER] = fn;
    if (call !== undefined && call !== raw) (raw as Stamped)[LAST_CALL] = call;
  } catch {
    // A frozen request: nothing kept.
  }
}

/**
 * `fn` wrapped so that each call stamps the request behind its first argument (the argument
 * itself without `rawOf`) with `fn`; error handlers and wrappers as they are. `settled`: for
 * frameworks whose functions hold a request until the promise they return settles (Koa's
 * onion, where a middleware resumes after `await next()`): when the call has settled and `fn`
 * is still the stamp (no function it handed the request to still holds it), the stamp goes back
 * to the function that held the request before it, so a middleware still pending after its
 * downstream finished is the one named (the previous stamp is a local of the call: no closure per
 * call; a promise frame only when the function returned a promise and another function held the
 * request before it; the first function of a chain keeps its stamp).
 */
export function stamping(fn: unknown, rawOf?: RawOf, settled = false, kind?: StampKind): unknown {
  if (typeof fn !== 'function' || wrappers.has(fn) || fn.length >= 4) return fn;
  noteKind(fn, kind);
  const original = fn as Fn;
  /** The raw request behind a first argument, undefined when it leads to none. */
  const rawFrom = (a: unknown): Stamped | undefined => {
    if (typeof a !== 'object' || a === null) return undefined;
    if (rawOf === undefined) return a as Stamped;
    try {
      const raw = rawOf(a);
      return typeof raw === 'object' && raw !== null ? (raw as Stamped) : undefined;
    } catch {
      return undefined;
    }
  };
  const mark = (a: unknown): void => {
    const raw = rawFrom(a);
    if (raw !== undefined) stamp(raw, original, rawOf === undefined ? undefined : (a as object));
  };
  // Fixed arguments (req, res, next), as the routers call them: no array per call. An async
  // function stays one (Fastify refuses some async hooks by their kind, restify tells them apart).
  let wrapper: Fn;
  if (settled) {
    const withCall = rawOf !== undefined;
    // Koa tells no function apart by its kind: one wrapper, whose promise is made only for a promise.
    wrapper = function (this: unknown, a: unknown, b: unknown, c: unknown): unknown {
      const raw = rawFrom(a);
      if (raw === undefined) return original.call(this, a, b, c);
      const before = raw[LAST_HANDLER];
      stamp(raw, original, withCall ? (a as object) : undefined);
      let result: unknown;
      try {
        result = original.call(this, a, b, c);
      } catch (err) {
        if (before !== undefined && raw[LAST_HANDLER] === original) unstamp(raw, before);
        throw err;
      }
      // Nothing held the request before (the chain's first function, a route's only one): nothing
      // to give back, no frame. A promise: held until it settles (only then a frame of its own).
      if (before === undefined) return result;
      if (result instanceof Promise) return settle(result, raw, original, before);
      if (raw[LAST_HANDLER] === original) unstamp(raw, before);
      return result;
    };
  } else
    wrapper =
      original instanceof AsyncFunction
        ? async function (this: unknown, a: unknown, b: unknown, c: unknown): Promise<unknown> {
            mark(a);
            return original.call(this, a, b, c);
          }
        : function (this: unknown, a: unknown, b: unknown, c: unknown): unknown {
            mark(a);
            return original.call(this, a, b, c);
          };
  defineLike(wrapper, original);
  wrappers.add(wrapper);
  return wrapper;
}

/** `result` once settled, the stamp put back then if `fn` still holds it. */
async function settle(result: Promise<unknown>, raw: Stamped, fn: unknown, before: unknown): Promise<unknown> {
  try {
    return await result;
  } finally {
    if (raw[LAST_HANDLER] === fn) unstamp(raw, before);
  }
}

/** Puts back the stamp a settled call replaced; never throws. */
function unstamp(raw: Stamped, before: unknown): void {
  try {
    raw[LAST_HANDLER] = before;
  } catch {
    // A frozen request.
  }
}

/**
 * Wraps every function of `list` in place (an array a router calls its entries from). `kind`:
 * 'middleware' for a list of middleware, 'route' for a route's functions (its handler last, the
 * middleware before it), undefined when the framework does not tell.
 */
export function stampList(list: unknown, rawOf?: RawOf, settled = false, kind?: 'middleware' | 'route'): void {
  if (!Array.isArray(list)) return;
  for (let i = 0; i < list.length; i++) {
    const w = stamping(list[i], rawOf, settled, kind === 'route' ? (i === list.length - 1 ? 'handler' : 'middleware') : kind);
    if (w !== list[i]) list[i] = w;
  }
}

/** connect's stack: `{ route, handle }` entries, each handle wrapped in place. */
export function stampLayers(stack: unknown): void {
  if (!Array.isArray(stack)) return;
  for (const layer of stack as unknown[]) {
    if (typeof layer !== 'object' || layer === null) continue;
    const handle = (layer as { handle?: unknown }).handle;
    const w = stamping(handle, undefined, false, 'middleware');
    if (w !== handle) (layer as { handle?: unknown }).handle = w;
  }
}

/**
 * An Express Layer prototype: its request method stamps the request with the layer before the
 * layer runs its handle (a route's dispatch is stamped, then each of the route's own layers);
 * lastStamp reads the handle and its kind off the layer.
 */
export function stampExpressLayer(proto: object | undefined): void {
  if (proto === undefined || patchedLayers.has(proto)) return;
  patchedLayers.add(proto);
  for (const name of ['handle_request', 'handleRequest']) {
    if (!Object.prototype.hasOwnProperty.call(proto, name)) continue;
    const original = dataFunction(proto, name) as Fn | undefined;
    if (original === undefined) continue;
    const wrapper = function (this: object, req: unknown, res: unknown, next: unknown): unknown {
      if (typeof req === 'object' && req !== null) (req as Stamped)[LAST_HANDLER] = this;
      return original.call(this, req, res, next);
    };
    defineLike(wrapper, original);
    replaceData(proto, name, wrapper);
  }
}

const onFastifyHandler = (m: unknown): void => {
  try {
    const raw = (m as { request?: { raw?: unknown } }).request?.raw;
    if (typeof raw === 'object' && raw !== null) (raw as Stamped)[FASTIFY_CALL] = m;
  } catch {
    // Never into the target.
  }
};

/** Keeps Fastify 5's handler message on each raw request (subscribed once, for the agent's life). */
export function watchFastify(): void {
  dc.subscribe(FASTIFY_HANDLER_START, onFastifyHandler);
}

/** The route pattern and handler of a raw request Fastify handed to a route handler, read from the message kept on it. */
export function fastifyRoute(req: object): { route: string; handler?: Function } | undefined {
  const call = (req as Stamped)[FASTIFY_CALL] as { request?: object; route?: { url?: unknown } } | undefined;
  const url = call?.route?.url;
  if (call === undefined || typeof url !== 'string') return undefined;
  const request = call.request;
  const key = request === undefined ? undefined : Object.getOwnPropertySymbols(request).find((s) => s.description === 'fastify.context');
  const handler = key === undefined ? undefined : dataFunction((request as Stamped)[key], 'handler');
  return { route: url, ...(handler !== undefined ? { handler } : {}) };
}
