// Routes and middleware registered after listen (docs/architecture.md, case 3: identical handlers piling
// up in a router). At the first listen the already-loaded frameworks are found in
// require.cache (also when imported from ESM) and their router prototypes patched:
// Express 5 (`router`), Express 4 (express/lib/router), Koa's app.use, @koa/router and
// koa-router, restify, polka (trouter, its router's base class: the first request a polka app
// finds a route for shows the app, whose `use` is then patched) and connect (an app is the
// server's 'request' listener; its own `use` is patched).
// Express apps handed to http.createServer are also found from the server's 'request'
// listener. The same places stamp each request with the last function they hand it to
// (last-handler.ts), for requests left unanswered. Fastify refuses routes after listen, so it needs nothing. Registrations before
// listen pass straight through.
// Probing never runs framework code: properties are read from data descriptors only
// (own-data.ts), so a getter (Express 4's `app.router`, which throws a deprecation; Express 5's
// lazy one) reads as absent, and methods are replaced by redefining their data property.
import type * as net from 'node:net';
import type { GrowthBody, GrowthHook } from './growth-hooks.js';
import { threadState } from '../thread-state.js';
import { SiteCounter, withSite } from './site-counter.js';
import { defineLike } from './wrap.js';
import { dataFunction, dataValue, replaceData } from './own-data.js';
import { stampExpressLayer, stampLayers, stampList, watchFastify } from './last-handler.js';
import {
  noteKoaUseAfterListen,
  stampHapiToolkit,
  stampHonoContext,
  stampHonoListener,
  stampKoaApp,
  stampKoaRouter,
  stampRestifyChain,
  watchFastifyInstances,
} from './framework-stamps.js';

type Fn = (this: unknown, ...args: unknown[]) => unknown;
interface Stacked {
  stack?: unknown[];
}
/** The length of `obj[key]` when it is a plain data array (a router's stack, Koa's middleware). */
const lengthOf = (obj: unknown, key: string): number | undefined => {
  const v = dataValue(obj, key);
  return Array.isArray(v) ? v.length : undefined;
};
interface RouteData {
  framework: string;
  method: string;
  path: string;
  stackSize?: number;
}

const EXPRESS5_ROUTER = /[\\/]node_modules[\\/]router[\\/]index\.js$/;
const EXPRESS4_ROUTER = /[\\/]node_modules[\\/]express[\\/]lib[\\/]router[\\/]index\.js$/;
const KOA_ROUTER = /[\\/]node_modules[\\/](@koa[\\/]router|koa-router)[\\/]/;
const RESTIFY_SERVER = /[\\/]node_modules[\\/]restify[\\/]lib[\\/]server\.js$/;
const EXPRESS_LAYER = /[\\/]node_modules[\\/](express[\\/]lib[\\/]router|router[\\/]lib)[\\/]layer\.js$/;
const TROUTER = /[\\/]node_modules[\\/]trouter[\\/]index\.js$/;
const KOA_COMPOSE = /[\\/]node_modules[\\/]koa-compose[\\/]index\.js$/;
/** A package's `lib/application.js`: Koa's (also under another name) when its class has Koa's methods. */
const LIB_APPLICATION = /[\\/]node_modules[\\/][^\\/]+[\\/]lib[\\/]application\.js$/;
const HAPI_TOOLKIT = /[\\/]node_modules[\\/]@hapi[\\/]hapi[\\/]lib[\\/]toolkit\.js$/;
const RESTIFY_CHAIN = /[\\/]node_modules[\\/]restify[\\/]lib[\\/]chain\.js$/;
const HONO_CONTEXT = /[\\/]node_modules[\\/]hono[\\/]dist[\\/]cjs[\\/]context\.js$/;
/** The frameworks' own files: a registration's site is the first frame outside them. */
const FRAMEWORK_FILE =
  /[\\/]node_modules[\\/](express|router|@koa[\\/]router|koa-router|koa-compose|koa|restify|find-my-way|polka|trouter|connect|@hapi[\\/][^\\/]+|hono|@hono[\\/]node-server)[\\/]/;
/** The package directory (`…/node_modules/<name>/`, scoped names included) a module file belongs to. */
const PACKAGE_ROOT = /^(.*[\\/]node_modules[\\/](?:@[^\\/]+[\\/])?[^\\/]+[\\/])/;
const RESTIFY_METHODS = ['get', 'post', 'put', 'del', 'patch', 'head', 'opts', 'use', 'pre'];

export class RouteGrowth implements GrowthHook {
  private readonly sites = new SiteCounter<RouteData>(() => ({ framework: '', method: '', path: '' }));
  private readonly patched = new WeakSet<object>();
  private readonly routeRouter = new WeakMap<object, Stacked>();
  /** Polka apps seen (by the first route lookup each made). */
  private readonly polkaApps = new WeakSet<object>();
  /** Package directories of frameworks found under another name (an npm alias such as `express4`). */
  private readonly aliasRoots: string[] = [];
  private readonly isFrameworkFile = (file: string): boolean =>
    FRAMEWORK_FILE.test(file) || this.aliasRoots.some((r) => file.startsWith(r));
  private scanned = false;

  install(): void {
    // Nothing to patch before listen: the frameworks are found then. Fastify publishes each
    // instance as it is made (its registrations are wrapped from then on), Fastify 5 its handler calls.
    watchFastify();
    watchFastifyInstances();
  }

  onListen(server: net.Server): void {
    if (!this.scanned) {
      this.scanned = true;
      this.scanRequireCache();
    }
    for (const fn of server.listeners('request')) {
      this.patchExpressApp(fn);
      this.patchConnectApp(fn);
      // Not an Express or connect app: perhaps @hono/node-server's, serving Hono loaded as ES modules.
      if (dataFunction(fn, 'handle') === undefined) stampHonoListener(fn);
    }
  }

  contribute(into: GrowthBody): void {
    for (const e of this.sites.entries.values()) {
      const row: GrowthBody['routes'][number] = { framework: e.data.framework, method: e.data.method, path: e.data.path, count: e.count };
      if (e.data.stackSize !== undefined) row.stackSize = e.data.stackSize;
      into.routes.push(withSite(row, e));
    }
  }

  private scanRequireCache(): void {
    const cache = (require as NodeJS.Require).cache;
    const files = Object.keys(cache);
    const anyCompose = files.find((f) => KOA_COMPOSE.test(f));
    for (const file of files) {
      const exp = dataValue(cache[file], 'exports') as Record<string, unknown> | undefined;
      if ((typeof exp !== 'object' && typeof exp !== 'function') || exp === null) continue;
      if (LIB_APPLICATION.test(file) && isKoaApplication(exp)) {
        // The koa-compose this Koa required (a module's children are those it loaded first), else any.
        const children = dataValue(cache[file], 'children');
        const own = Array.isArray(children) ? children.find((m) => KOA_COMPOSE.test(String(dataValue(m, 'id')))) : undefined;
        const compose = dataFunction(own ?? (anyCompose === undefined ? undefined : cache[anyCompose]), 'exports');
        this.patchKoaApp(exp, compose);
        continue;
      }
      if (!FRAMEWORK_FILE.test(file)) continue;
      if (EXPRESS5_ROUTER.test(file)) this.patchExpressRouterProto(ownerOf(dataValue(exp, 'prototype'), 'route'));
      else if (EXPRESS4_ROUTER.test(file)) this.patchExpressRouterProto(ownerOf(exp, 'route'));
      else if (KOA_ROUTER.test(file)) this.patchKoaRouter(exp);
      else if (RESTIFY_SERVER.test(file)) this.patchRestify(exp);
      else if (RESTIFY_CHAIN.test(file)) stampRestifyChain(prototypeOf(exp));
      else if (HAPI_TOOLKIT.test(file))
        stampHapiToolkit(prototypeOf(dataValue(exp, 'Manager')), (request) => this.patchHapiServer(request));
      else if (HONO_CONTEXT.test(file)) stampHonoContext(exp);
      else if (EXPRESS_LAYER.test(file)) stampExpressLayer(prototypeOf(exp));
      else if (TROUTER.test(file)) this.patchTrouter(exp);
    }
  }

  /**
   * An Express app as a server's request listener: its router is Express 4's `_router` (plain
   * data once a route exists). Express 4's `router` is a getter that throws a deprecation and
   * Express 5's builds the router lazily: neither is read (Express 5's router package is found
   * in require.cache instead).
   */
  private patchExpressApp(fn: unknown): void {
    if (typeof fn !== 'function') return;
    if (dataFunction(fn, 'handle') === undefined || dataFunction(fn, 'set') === undefined) return;
    const router = dataValue(fn, '_router') ?? dataValue(fn, 'router');
    if (typeof router !== 'function' && (typeof router !== 'object' || router === null)) return;
    const firstLayer = (dataValue(router, 'stack') as unknown[] | undefined)?.[0];
    if (typeof firstLayer === 'object' && firstLayer !== null) stampExpressLayer(Object.getPrototypeOf(firstLayer) as object);
    const proto = ownerOf(router, 'route');
    if (proto === undefined || this.patched.has(proto)) return;
    this.noteAliasRoot(proto);
    this.patchExpressRouterProto(proto);
  }

  /**
   * Express found through a request listener, not by its path: installed under another name.
   * Its package directory (that of the module exporting the router) joins the framework files,
   * so a registration's site is still the user's call, not express's own application.js.
   */
  private noteAliasRoot(proto: object): void {
    const cache = (require as NodeJS.Require).cache;
    for (const file of Object.keys(cache)) {
      const exp = dataValue(cache[file], 'exports');
      if (exp !== proto && (typeof exp !== 'function' || dataValue(exp, 'prototype') !== proto)) continue;
      const root = PACKAGE_ROOT.exec(file)?.[1];
      if (root !== undefined && !FRAMEWORK_FILE.test(file) && !this.aliasRoots.includes(root)) this.aliasRoots.push(root);
      return;
    }
  }

  private patchExpressRouterProto(proto: Record<string, unknown> | undefined): void {
    if (proto === undefined || this.patched.has(proto)) return;
    this.patched.add(proto);
    const self = this;
    this.wrapMethod(proto, 'use', function (this: Stacked, args, wrapper) {
      self.record({ framework: 'express', method: 'USE', path: pathOf(args[0]), stackSize: lengthOf(this, 'stack') }, wrapper);
    });
    // router.param / app.param: the callbacks bound to a param run in turn on every request whose route has it.
    this.wrapMethod(proto, 'param', function (args, wrapper) {
      if (typeof args[0] === 'string') self.record({ framework: 'express', method: 'PARAM', path: `:${args[0]}` }, wrapper);
    });
    const route = dataFunction(proto, 'route') as Fn | undefined;
    if (route === undefined) return;
    const wrapped = function (this: Stacked, ...args: unknown[]): unknown {
      const r = route.apply(this, args);
      if (typeof r === 'object' && r !== null) {
        try {
          self.routeRouter.set(r, this);
          self.patchExpressRoute(ownerOf(r, 'dispatch'));
        } catch {
          // Never break a registration.
        }
      }
      return r;
    };
    defineLike(wrapped, route);
    replaceData(proto, 'route', wrapped);
  }

  /** Route.prototype.get/post/...: the registration a user's app.get(path, fn) ends in. */
  private patchExpressRoute(proto: Record<string, unknown> | undefined): void {
    if (proto === undefined || this.patched.has(proto)) return;
    this.patched.add(proto);
    const self = this;
    for (const name of Object.keys(proto)) {
      if (name.startsWith('_') || name === 'dispatch' || dataFunction(proto, name) === undefined) continue;
      this.wrapMethod(proto, name, function (this: object, _args, wrapper) {
        const router = self.routeRouter.get(this);
        const path = dataValue(this, 'path');
        self.record(
          {
            framework: 'express',
            method: name.toUpperCase(),
            path: typeof path === 'string' ? path : '',
            stackSize: lengthOf(router, 'stack'),
          },
          wrapper,
        );
      });
    }
  }

  private patchKoaRouter(exp: Record<string, unknown>): void {
    const Ctor = typeof exp === 'function' ? exp : (dataValue(exp, 'default') ?? dataValue(exp, 'Router'));
    const proto = typeof Ctor === 'function' ? (dataValue(Ctor, 'prototype') as Record<string, unknown> | undefined) : undefined;
    if (typeof proto !== 'object' || proto === null || dataFunction(proto, 'register') === undefined || this.patched.has(proto)) return;
    this.patched.add(proto);
    const self = this;
    this.wrapMethod(proto, 'register', function (this: Stacked, args, wrapper) {
      const methods = Array.isArray(args[1]) ? (args[1] as unknown[]) : [];
      const method = methods.length === 0 ? 'USE' : methods.map((m) => (typeof m === 'string' ? m.toUpperCase() : '?')).join(',');
      self.record({ framework: 'koa-router', method, path: pathOf(args[0]), stackSize: lengthOf(this, 'stack') }, wrapper);
      stampKoaRouter(this);
    });
  }

  /**
   * Koa's Application.prototype.use: middleware for every path, kept in `app.middleware`; its
   * requests run the app's middleware wrapped (framework-stamps.ts).
   */
  private patchKoaApp(exp: Record<string, unknown>, compose: Function | undefined): void {
    const proto = prototypeOf(exp);
    if (proto === undefined || this.patched.has(proto)) return;
    this.patched.add(proto);
    const self = this;
    this.wrapMethod(proto, 'use', function (this: object, _args, wrapper) {
      const stackSize = lengthOf(this, 'middleware');
      noteKoaUseAfterListen(this, stackSize);
      self.record({ framework: 'koa', method: 'USE', path: '/', stackSize }, wrapper);
    });
    stampKoaApp(proto, compose);
  }

  /**
   * A hapi server, found by the first request it runs an app function for (its class is not
   * exported): `route` and `ext` after listen are registrations.
   */
  private patchHapiServer(request: object): void {
    const server = dataValue(request, 'server');
    const proto = typeof server === 'object' && server !== null ? (Object.getPrototypeOf(server) as Record<string, unknown> | null) : null;
    if (proto === null || this.patched.has(proto)) return;
    this.patched.add(proto);
    const self = this;
    this.wrapMethod(proto, 'route', function (args, wrapper) {
      for (const r of [args[0]].flat()) {
        const method = dataValue(r, 'method');
        self.record(
          {
            framework: 'hapi',
            method: [method]
              .flat()
              .map((m) => String(m).toUpperCase())
              .join(','),
            path: pathOf(dataValue(r, 'path')),
          },
          wrapper,
        );
      }
    });
    this.wrapMethod(proto, 'ext', function (args, wrapper) {
      const events = typeof args[0] === 'string' ? [args[0]] : [args[0]].flat().map((e) => dataValue(e, 'type'));
      for (const type of events) self.record({ framework: 'hapi', method: 'EXT', path: String(type) }, wrapper);
    });
  }

  private patchRestify(exp: Record<string, unknown>): void {
    const proto = prototypeOf(exp);
    if (proto === undefined || this.patched.has(proto)) return;
    this.patched.add(proto);
    const self = this;
    for (const name of RESTIFY_METHODS) {
      if (dataFunction(proto, name) === undefined) continue;
      this.wrapMethod(proto, name, function (_args, wrapper) {
        const opts = _args[0];
        const path =
          typeof opts === 'object' && opts !== null && !(opts instanceof RegExp) && !Array.isArray(opts)
            ? pathOf(dataValue(opts, 'path'))
            : pathOf(opts);
        const method = name === 'del' ? 'DELETE' : name === 'opts' ? 'OPTIONS' : name.toUpperCase();
        self.record({ framework: 'restify', method, path }, wrapper);
      });
    }
  }

  /**
   * A connect app as a server's request listener (a function with its own `use`, `handle` and
   * `stack`, and no Express `set`): its stack's handlers stamp the requests they take, and its
   * own `use` is patched (stamping what it adds).
   */
  private patchConnectApp(fn: unknown): void {
    if (typeof fn !== 'function' || this.patched.has(fn)) return;
    const stack = dataValue(fn, 'stack');
    if (!Array.isArray(stack) || dataFunction(fn, 'handle') === undefined || dataFunction(fn, 'set') !== undefined) return;
    if (!Object.prototype.hasOwnProperty.call(fn, 'use')) return;
    this.patched.add(fn);
    stampLayers(stack);
    const self = this;
    this.wrapMethod(fn as unknown as Record<string, unknown>, 'use', function (this: object, args, wrapper) {
      const list = dataValue(this, 'stack');
      if (Array.isArray(list)) stampLayers(list.slice(-1));
      self.record(
        { framework: 'connect', method: 'USE', path: typeof args[0] === 'string' ? args[0] : '/', stackSize: lengthOf(this, 'stack') },
        wrapper,
      );
    });
  }

  /**
   * trouter, polka's router base class: its `find` runs once per request with the app as `this`,
   * which is how a polka app (made by a factory that exports no class) is found. Routes added
   * after listen go through Trouter's `add` (polka's `get` and co. are bound at construction).
   */
  private patchTrouter(exp: unknown): void {
    const proto = prototypeOf(exp);
    if (proto === undefined || this.patched.has(proto)) return;
    const find = dataFunction(proto, 'find') as Fn | undefined;
    if (find === undefined) return;
    this.patched.add(proto);
    const self = this;
    const wrapped = function (this: object, ...args: unknown[]): unknown {
      if (!self.polkaApps.has(this)) {
        self.polkaApps.add(this);
        try {
          self.patchPolkaApp(this);
        } catch {
          // Never break a request.
        }
      }
      return find.apply(this, args);
    };
    defineLike(wrapped, find);
    replaceData(proto, 'find', wrapped);
    this.wrapMethod(proto, 'add', function (this: object, args, wrapper) {
      const handlers = dataValue(dataValue(this, 'handlers'), String(args[0]));
      stampList(dataValue(handlers, String(args[1])), undefined, false, 'route');
      self.record({ framework: 'polka', method: String(args[0]), path: pathOf(args[1]) }, wrapper);
    });
  }

  /** A polka app: its middleware (`wares`, `bwares`) and route handlers stamp requests; its class's `use` is patched. */
  private patchPolkaApp(app: object): void {
    if (!Array.isArray(dataValue(app, 'wares'))) return;
    stampPolka(app);
    const proto = Object.getPrototypeOf(app) as Record<string, unknown> | null;
    if (proto === null || this.patched.has(proto)) return;
    this.patched.add(proto);
    const self = this;
    this.wrapMethod(proto, 'use', function (this: object, args, wrapper) {
      stampPolka(this);
      self.record(
        { framework: 'polka', method: 'USE', path: typeof args[0] === 'string' ? args[0] : '/', stackSize: polkaStackSize(this) },
        wrapper,
      );
    });
  }

  /** Replaces proto[name] with a wrapper that calls the original, then `after` when listening. */
  private wrapMethod(proto: Record<string, unknown>, name: string, after: (this: never, args: unknown[], wrapper: Function) => void): void {
    // Only a method the prototype itself holds as data: an inherited one is wrapped where it lives.
    if (!Object.prototype.hasOwnProperty.call(proto, name)) return;
    const original = dataFunction(proto, name) as Fn | undefined;
    if (original === undefined) return;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      const result = original.apply(this, args);
      if (threadState.listening) {
        try {
          (after as (this: unknown, args: unknown[], wrapper: Function) => void).call(this, args, wrapper);
        } catch {
          // Never break a registration.
        }
      }
      return result;
    };
    defineLike(wrapper, original);
    replaceData(proto, name, wrapper);
  }

  private record(data: RouteData, skip: Function): void {
    const e = this.sites.hit(`${data.framework}\0${data.method}\0${data.path}`, skip, this.isFrameworkFile);
    if (e === undefined) return;
    e.data.framework = data.framework;
    e.data.method = data.method;
    e.data.path = data.path;
    if (data.stackSize !== undefined) e.data.stackSize = data.stackSize;
  }
}

/** Every function a polka app calls for requests: its middleware for all paths, by base path, and its route handlers. */
function stampPolka(app: object): void {
  stampList(dataValue(app, 'wares'), undefined, false, 'middleware');
  for (const list of Object.values((dataValue(app, 'bwares') as Record<string, unknown> | undefined) ?? {}))
    stampList(list, undefined, false, 'middleware');
  for (const byPattern of Object.values((dataValue(app, 'handlers') as Record<string, unknown> | undefined) ?? {})) {
    for (const list of Object.values((byPattern as Record<string, unknown> | undefined) ?? {})) stampList(list, undefined, false, 'route');
  }
}

/** The functions of a polka app's middleware lists. */
function polkaStackSize(app: object): number {
  const bwares = (dataValue(app, 'bwares') as Record<string, unknown> | undefined) ?? {};
  return (lengthOf(app, 'wares') ?? 0) + Object.values(bwares).reduce<number>((a, l) => a + (Array.isArray(l) ? l.length : 0), 0);
}

/** Koa's Application class: `use`, `callback`, `handleRequest` and `createContext` on its prototype. */
function isKoaApplication(exp: unknown): boolean {
  const proto = prototypeOf(exp);
  return proto !== undefined && ['use', 'callback', 'handleRequest', 'createContext'].every((m) => dataFunction(proto, m) !== undefined);
}

/** A constructor's `prototype` (a data property of every function that has one). */
function prototypeOf(exp: unknown): Record<string, unknown> | undefined {
  if (typeof exp !== 'function') return undefined;
  const proto = dataValue(exp, 'prototype');
  return typeof proto === 'object' && proto !== null ? (proto as Record<string, unknown>) : undefined;
}

/** The object in `obj`'s prototype chain (itself included) that owns `key`. */
function ownerOf(obj: unknown, key: string): Record<string, unknown> | undefined {
  for (
    let o = obj as object | null;
    o !== null && o !== undefined && o !== Object.prototype && o !== Function.prototype;
    o = Object.getPrototypeOf(o)
  ) {
    if (Object.prototype.hasOwnProperty.call(o, key)) return o as Record<string, unknown>;
  }
  return undefined;
}

function pathOf(arg: unknown): string {
  if (typeof arg === 'string') return arg;
  if (arg instanceof RegExp) return String(arg);
  if (Array.isArray(arg)) return arg.map(pathOf).join(',');
  return '/';
}
