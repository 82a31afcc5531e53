// Stamping the request for frameworks whose functions take their own request object
// (last-handler.ts): each patch finds the app's functions where the framework keeps or calls
// them, wraps them so a call stamps the raw request behind the framework's object, and keeps
// that object so the route's pattern can be read when the request is left unanswered. Every
// patch checks the shapes it relies on and leaves the framework as it is when they differ; a
// wrapper never throws into the app.
//   Fastify 4 and 5: each instance is published at creation (`fastify.initialization`); the
//     agent wraps the functions the app registers through its public API (`addHook` for the
//     request's hooks, an `onRoute` hook for each route's handler and route-level hooks).
//   Koa 2 and 3: koa-compose copies `app.middleware` when the server is made, so the copy the
//     app runs cannot be reached; the first request of each app composes the same functions
//     again, wrapped, with the app's own compose, and `handleRequest` runs that instead.
//     @koa/router reads each layer's functions per request: they are wrapped in place. A
//     composition among them (koa-mount's mounted app, koa-compose's) has its copy found through
//     its closure and wrapped in place. A Koa function holds the request until its promise
//     settles: a middleware pending after its downstream settled is named (last-handler.ts).
//   hapi: every app function (handler, `ext` point, auth scheme) runs through the toolkit's
//     `execute`, patched once.
//   restify: each route's chain reads its handlers per request: wrapped in place when its
//     chain runs and has grown.
//   Hono (on @hono/node-server): the functions of each match the app's router returns are
//     wrapped in place, in the `[fn, route]` pairs the router keeps (once each), before Hono calls
//     them; a call keeps the context on node's request (the context knows the matched routes) and
//     holds the request until its promise settles, as Koa's. CommonJS build: each request's
//     Context is made through its module's export, replaced by a subclass that keeps the context
//     and wraps the match it is given. Loaded as ES modules (or bundled): the app is caught at the
//     first call of its `fetch` (first-call-this.ts), found through the server's request listener,
//     and its router's `match` wrapped; where that cannot be armed, the Context class's `req`
//     getter keeps the context (no function is wrapped then).
import { IncomingMessage } from 'node:http';
import * as dc from 'node:diagnostics_channel';
import { defineLike } from './wrap.js';
import { dataFunction, dataValue, replaceData } from './own-data.js';
import { LAST_CALL, stamp, stampList, stamping, type RawOf } from './last-handler.js';
import { closureValues } from './closure-values.js';
import { onNextCallThis } from './first-call-this.js';

type Fn = (this: unknown, ...args: unknown[]) => unknown;
type Stamped = Record<symbol, unknown>;

const fastifyRaw: RawOf = (request) => dataValue(request, 'raw');
const koaRaw: RawOf = (ctx) => dataValue(ctx, 'req');

/** Fastify's hooks that take (request, reply, done) before the reply: the ones a request can hang in. */
const FASTIFY_HOOKS = new Set(['onRequest', 'preValidation', 'preHandler']);
const FASTIFY_INIT = 'fastify.initialization';
const seenFastify = new WeakSet<object>();

/** A route option's hooks (a function or an array of them), wrapped. */
function stampHooks(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((f) => stamping(f, fastifyRaw, false, 'hook'));
  return stamping(value, fastifyRaw, false, 'hook');
}

function onFastifyInit(message: unknown): void {
  try {
    const fastify = dataValue(message, 'fastify') as Record<string, unknown> | undefined;
    if (typeof fastify !== 'object' || fastify === null || seenFastify.has(fastify)) return;
    const addHook = dataFunction(fastify, 'addHook') as Fn | undefined;
    if (addHook === undefined || !Object.prototype.hasOwnProperty.call(fastify, 'addHook')) return;
    seenFastify.add(fastify);
    const wrapped = function (this: unknown, name: unknown, fn: unknown, ...rest: unknown[]): unknown {
      const hook = typeof name === 'string' && FASTIFY_HOOKS.has(name) ? stamping(fn, fastifyRaw, false, 'hook') : fn;
      return addHook.call(this, name, hook, ...rest);
    };
    defineLike(wrapped, addHook);
    if (!replaceData(fastify, 'addHook', wrapped)) return;
    // Route options as the app wrote them, before fastify checks and binds them.
    addHook.call(fastify, 'onRoute', function hotpathStampRoute(opts: Record<string, unknown>) {
      try {
        if (typeof opts.handler === 'function') opts.handler = stamping(opts.handler, fastifyRaw, false, 'handler');
        for (const name of FASTIFY_HOOKS) if (opts[name] !== undefined) opts[name] = stampHooks(opts[name]);
      } catch {
        // The route as written.
      }
    });
  } catch {
    // Never into the target.
  }
}

/** Wraps what every Fastify instance made from now on registers (subscribed once, for the agent's life). */
export function watchFastifyInstances(): void {
  dc.subscribe(FASTIFY_INIT, onFastifyInit);
}

/** Each Koa app's middleware as koa composed it, against the wrapped composition run instead. */
const koaComposed = new WeakMap<Function, Function>();
/** Koa apps' middleware counts before their first `use` after listen (what the server was made with). */
const koaListenLength = new WeakMap<object, number>();

/** Called by the `use` patch after listen with the app's new length: the length before it is what koa composed. */
export function noteKoaUseAfterListen(app: object, lengthAfter: number | undefined): void {
  if (lengthAfter !== undefined && !koaListenLength.has(app)) koaListenLength.set(app, lengthAfter - 1);
}

/** Koa's Application.prototype.handleRequest: runs each app's middleware wrapped. `compose`: koa-compose, when loaded. */
export function stampKoaApp(proto: Record<string, unknown>, compose: Function | undefined): void {
  const original = dataFunction(proto, 'handleRequest') as Fn | undefined;
  if (original === undefined || !Object.prototype.hasOwnProperty.call(proto, 'handleRequest')) return;
  const wrapper = function (this: object, ctx: unknown, fnMiddleware: unknown): unknown {
    let fn = fnMiddleware;
    if (typeof fnMiddleware === 'function') {
      fn = koaComposed.get(fnMiddleware);
      if (fn === undefined) {
        fn = composeStamped(this, compose) ?? fnMiddleware;
        koaComposed.set(fnMiddleware, fn as Function);
      }
    }
    return original.call(this, ctx, fn);
  };
  defineLike(wrapper, original);
  replaceData(proto, 'handleRequest', wrapper);
}

/** The app's middleware (as many as koa composed), each wrapped, composed by the app's compose (Koa 3) or koa-compose. */
function composeStamped(app: object, compose: Function | undefined): Function | undefined {
  try {
    const list = dataValue(app, 'middleware');
    const by = dataFunction(app, 'compose') ?? compose;
    if (!Array.isArray(list) || by === undefined || !list.every((f) => typeof f === 'function')) return undefined;
    const n = Math.min(list.length, koaListenLength.get(app) ?? list.length);
    const composed = (by as Fn).call(app, list.slice(0, n).map(stampKoaMiddleware));
    return typeof composed === 'function' ? composed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A Koa middleware wrapped (a call holds the request until its promise settles); @koa/router's
 * dispatch (`router.routes()`) left as it is, its layers' functions wrapped; a composition
 * (koa-compose's, koa-mount's of a sub-app) left as it is, the functions it runs wrapped.
 */
function stampKoaMiddleware(fn: unknown, depth = 0): unknown {
  const router = dataValue(fn, 'router');
  if (typeof router === 'object' && router !== null && Array.isArray(dataValue(router, 'stack'))) {
    stampKoaRouter(router);
    return fn;
  }
  if (typeof fn === 'function' && stampComposed(fn, depth)) return fn;
  return stamping(fn, koaRaw, true, 'middleware');
}

/** @koa/router's layers: each one's functions, read per request, wrapped in place. */
export function stampKoaRouter(router: unknown): void {
  const stack = dataValue(router, 'stack');
  if (!Array.isArray(stack)) return;
  // A layer with no methods is the router's `use`; a route's functions end with its handler.
  for (const layer of stack) {
    const methods = dataValue(layer, 'methods');
    stampList(dataValue(layer, 'stack'), koaRaw, true, Array.isArray(methods) && methods.length > 0 ? 'route' : 'middleware');
  }
}

/** Source that composes: koa-compose's composition (`dispatch(0)`), koa-mount's middleware (`downstream`). */
const COMPOSING_SOURCE = /\bdispatch\(0\)|\bdownstream\b/;
const composedSeen = new WeakSet<Function>();

/**
 * A composition made before the agent could see it: koa-compose copies the functions it is given
 * and reads that copy (its closure's `middleware`) per request, and koa-mount composes a mounted
 * app's middleware once, when it is mounted (its closure's `downstream`). The copy is found
 * through the closure (closure-values.ts, once per function) and its functions wrapped in place.
 * True when `fn` is such a composition (left as it is).
 */
function stampComposed(fn: Function, depth: number): boolean {
  if (composedSeen.has(fn)) return true;
  if (depth > 8) return false;
  let source: string;
  try {
    source = Function.prototype.toString.call(fn);
  } catch {
    return false;
  }
  if (!COMPOSING_SOURCE.test(source)) return false;
  const values = closureValues(fn, ['middleware', 'downstream']);
  const list = values.get('middleware');
  const downstream = values.get('downstream');
  if (Array.isArray(list)) {
    composedSeen.add(fn);
    for (let i = 0; i < list.length; i++) {
      const w = stampKoaMiddleware(list[i], depth + 1);
      if (w !== list[i]) list[i] = w;
    }
    return true;
  }
  if (typeof downstream === 'function') {
    composedSeen.add(fn);
    stampComposed(downstream, depth + 1);
    return true;
  }
  return false;
}

/** hapi's toolkit Manager: `execute(method, request, options)` runs every app function for a request. */
export function stampHapiToolkit(proto: Record<string, unknown> | undefined, onRequest?: (request: object) => void): void {
  if (proto === undefined) return;
  const original = dataFunction(proto, 'execute') as Fn | undefined;
  if (original === undefined || !Object.prototype.hasOwnProperty.call(proto, 'execute')) return;
  const wrapper = function (this: unknown, method: unknown, request: unknown, options: unknown): unknown {
    if (typeof method === 'function' && typeof request === 'object' && request !== null) {
      try {
        const raw = dataValue(dataValue(request, 'raw'), 'req');
        if (raw instanceof IncomingMessage) stamp(raw, method, request);
        onRequest?.(request);
      } catch {
        // Never into the target.
      }
    }
    return original.call(this, method, request, options);
  };
  defineLike(wrapper, original);
  replaceData(proto, 'execute', wrapper);
}

/** Chains and the length of their handler list when last wrapped. */
const restifyChains = new WeakMap<object, number>();

/** restify's Chain.prototype.run: the chain's handlers wrapped in place when it runs and has grown. */
export function stampRestifyChain(proto: Record<string, unknown> | undefined): void {
  if (proto === undefined) return;
  const original = dataFunction(proto, 'run') as Fn | undefined;
  if (original === undefined || !Object.prototype.hasOwnProperty.call(proto, 'run')) return;
  const wrapper = function (this: object, req: unknown, res: unknown, done: unknown): unknown {
    try {
      const stack = dataValue(this, '_stack');
      if (Array.isArray(stack) && restifyChains.get(this) !== stack.length) {
        stampList(stack);
        restifyChains.set(this, stack.length);
      }
    } catch {
      // Never into the target.
    }
    return original.call(this, req, res, done);
  };
  defineLike(wrapper, original);
  replaceData(proto, 'run', wrapper);
}

/**
 * Hono's context module (`exports.Context`, read by the app at each request): replaced by a
 * subclass that keeps each context on node's request (@hono/node-server passes it as `env.incoming`).
 */
export function stampHonoContext(exp: unknown): void {
  const Original = dataFunction(exp, 'Context') as (new (...args: unknown[]) => object) | undefined;
  if (Original === undefined || typeof exp !== 'object' || exp === null || stampedHono.has(Original)) return;
  const proto = dataValue(Original, 'prototype');
  if (typeof proto !== 'object' || proto === null || Object.getOwnPropertyDescriptor(proto, 'req')?.get === undefined) return;
  const Context = class extends Original {
    constructor(...args: unknown[]) {
      super(...args);
      try {
        const raw = honoRaw(this);
        if (raw !== undefined) {
          (raw as Stamped)[LAST_CALL] = this;
          stampHonoMatch(dataValue(args[1], 'matchResult'));
        }
      } catch {
        // Never into the target.
      }
    }
  };
  defineLike(Context, Original);
  stampedHono.add(Context);
  if (replaceData(exp, 'Context', Context)) honoContextReplaced = true;
}
const stampedHono = new WeakSet<object>();
/** A CommonJS Hono's Context was replaced: its apps' matches are wrapped by it, no app needs catching. */
let honoContextReplaced = false;

/**
 * Node's request behind a Hono context (@hono/node-server passes it as `env.incoming`): read
 * directly, on the request path (`env` is a plain field of Hono's Context, `incoming` of the
 * adapter's literal; the wrapper's caller catches).
 */
const honoRaw: RawOf = (c) => {
  const raw = (c as { env?: { incoming?: unknown } }).env?.incoming;
  return raw instanceof IncomingMessage ? raw : undefined;
};

/**
 * The functions of a Hono match (`[[[fn, route], params], ...]`: Hono calls `result[0][i][0][0]`),
 * wrapped in place in their `[fn, route]` pair, the one the router keeps and hands out at every
 * match: each is wrapped once, later matches find the wrapper (a WeakSet look-up per function per
 * request). A call stamps node's request and keeps the context; it holds the request until its
 * promise settles, so a middleware pending after `await next()` is the one named.
 */
export function stampHonoMatch(result: unknown): void {
  try {
    const list = Array.isArray(result) ? (result[0] as unknown) : undefined;
    if (!Array.isArray(list)) return;
    for (let i = 0; i < list.length; i++) {
      const entry = list[i] as unknown;
      const pair = Array.isArray(entry) ? (entry[0] as unknown) : undefined;
      if (!Array.isArray(pair)) continue;
      const fn = pair[0] as unknown;
      // `use`'s functions are registered for every method on a wildcard path (`*`, `/admin/*`).
      const info = pair[1] as unknown;
      const path = dataValue(info, 'path');
      const use = dataValue(info, 'method') === 'ALL' && typeof path === 'string' && path.endsWith('*');
      const w = stamping(fn, honoRaw, true, use ? 'middleware' : 'handler');
      if (w !== fn) pair[0] = w;
    }
  } catch {
    // Never into the target.
  }
}

const honoRouters = new WeakSet<object>();

/**
 * A Hono app's router: every match it returns goes through stampHonoMatch. Hono reads
 * `app.router.match` at each request, and its routers replace their own `match` at their first
 * match (SmartRouter with the router it chose, RegExpRouter with its built matcher): `match`
 * becomes an accessor whose setter keeps what they set as the function wrapped. False when the
 * app has no router of that shape.
 */
export function stampHonoRouter(app: unknown): boolean {
  const router = dataValue(app, 'router');
  if (typeof router !== 'object' || router === null) return false;
  if (honoRouters.has(router)) return true;
  let inner = dataFunction(router, 'match') as Fn | undefined;
  const own = Object.getOwnPropertyDescriptor(router, 'match');
  if (inner === undefined || own?.configurable === false || (own !== undefined && !('value' in own))) return false;
  const match = function (this: unknown, method: unknown, path: unknown): unknown {
    const result = inner!.call(this, method, path);
    stampHonoMatch(result);
    return result;
  };
  defineLike(match, inner);
  try {
    Object.defineProperty(router, 'match', {
      configurable: true,
      enumerable: own?.enumerable ?? false,
      get: () => match,
      set: (v: unknown) => {
        if (typeof v === 'function') inner = v as Fn;
      },
    });
  } catch {
    return false; // A frozen router.
  }
  honoRouters.add(router);
  return true;
}

/** Request listeners already looked into. */
const listenersSeen = new WeakSet<Function>();

/** Hono's `fetch` (`(request, ...rest) => this.#dispatch(...)`, also as a bundler writes it). */
const HONO_FETCH_SOURCE = /dispatch/;

/**
 * Hono loaded as ES modules (or bundled), found through the server's request listener:
 * @hono/node-server's listener keeps the app's `fetch` (`fetchCallback`), an arrow whose `this`
 * is the app. The app is caught at fetch's first call (before it matches the request) and its
 * router wrapped (stampHonoRouter). Where that cannot be armed, the `Context` the module of
 * Hono's class imports (closure-values.ts reads it) has its `req` getter patched: Hono reads it
 * before each function of a route with middleware (to set `routeIndex`), handlers read it for
 * params, query and body; each read keeps the context on node's request.
 */
export function stampHonoListener(listener: unknown): void {
  if (typeof listener !== 'function' || listenersSeen.has(listener)) return;
  listenersSeen.add(listener);
  const fetch = closureValues(listener, ['fetchCallback']).get('fetchCallback');
  if (typeof fetch !== 'function') return;
  const Context = closureValues(fetch, ['Context'], ['module']).get('Context');
  // A CommonJS Hono whose Context was replaced needs nothing more.
  if (Context === undefined && (honoContextReplaced || !HONO_FETCH_SOURCE.test(sourceOf(fetch)))) return;
  const fallback = (): void => stampHonoRequestGetter(Context);
  const armed = onNextCallThis(
    fetch,
    (self) => {
      if (dataValue(self, 'fetch') !== fetch) return false;
      if (!stampHonoRouter(self)) fallback();
      return true;
    },
    fallback,
  );
  if (!armed) fallback();
}

function sourceOf(fn: Function): string {
  try {
    return Function.prototype.toString.call(fn);
  } catch {
    return '';
  }
}

function stampHonoRequestGetter(Context: unknown): void {
  const proto = dataValue(Context, 'prototype');
  if (typeof proto !== 'object' || proto === null || stampedHono.has(proto)) return;
  const d = Object.getOwnPropertyDescriptor(proto, 'req');
  const get = d?.get;
  if (d === undefined || get === undefined || d.configurable !== true) return;
  stampedHono.add(proto);
  const wrapped = function (this: { env?: { incoming?: unknown } }): unknown {
    const req: unknown = get.call(this);
    try {
      const raw = this.env?.incoming;
      if (raw instanceof IncomingMessage) (raw as unknown as Stamped)[LAST_CALL] = this;
    } catch {
      // Never into the target.
    }
    return req;
  };
  defineLike(wrapped, get);
  try {
    Object.defineProperty(proto, 'req', { ...d, get: wrapped });
  } catch {
    // A frozen class: as it is.
  }
}
