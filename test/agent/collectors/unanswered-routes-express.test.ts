// The unanswered-routes collector on real Express servers: a request left hanging in a route is
// noted with the route as written and its last handler, whatever form the route's path takes
// (a string, an array of paths, a RegExp), and with the agent's layer stamps whether it was a middleware or a route handler.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { UnansweredRoutes } from '../../../src/agent/collectors/unanswered-routes.js';
import { stampExpressLayer } from '../../../src/agent/hooks/last-handler.js';

const require = createRequire(import.meta.url);
// The agent runs as a CommonJS bundle, where function-location.ts reaches node:inspector through
// `require`; this ES module test gives it the same.
(globalThis as { require?: NodeRequire }).require ??= require;

type Handler = (req: unknown, res: unknown) => void;
interface App {
  get(path: unknown, handler: Handler): void;
  use(path: string, router: unknown): void;
}

/**
 * Serves `app` (built by `mount` with a handler that never answers) on 127.0.0.1, sends one GET
 * to `url`, and notes the connection once the handler has taken the request.
 */
async function hangOn(
  pkg: 'express' | 'express4' | 'express417',
  mount: (app: App, hang: Handler, express: { Router(): App }) => void,
  url: string,
): Promise<ReturnType<UnansweredRoutes['take']>> {
  const express = require(pkg) as (() => App) & { Router(): App };
  const app = express();
  let taken!: () => void;
  const reached = new Promise<void>((resolve) => (taken = resolve));
  const hang: Handler = function leaveHanging() {
    taken();
  };
  mount(app, hang, express);
  const server = http.createServer(app as unknown as http.RequestListener);
  const sockets: Socket[] = [];
  server.on('connection', (s: Socket) => sockets.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const req = http.get({ host: '127.0.0.1', port, path: url, agent: false });
  req.on('error', () => undefined);
  try {
    await reached;
    const routes = new UnansweredRoutes();
    routes.note(sockets[0] as unknown as Parameters<UnansweredRoutes['note']>[0], 1, 10);
    return routes.take();
  } finally {
    req.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

for (const pkg of ['express4', 'express417', 'express'] as const) {
  test(`${pkg}: a route given as an array of paths is noted with its paths and its handler`, async () => {
    const routes = await hangOn(pkg, (app, hang) => app.get(['/', '/reports/:id'], hang), '/reports/7');
    assert.equal(routes?.length, 1);
    assert.equal(routes[0].route, '/, /reports/:id');
    assert.equal(routes[0].pattern, true);
    assert.equal(routes[0].count, 1);
    assert.equal(routes[0].handler?.name, 'leaveHanging');
    assert.ok((routes[0].handler?.line ?? 0) > 0);
  });

  test(`${pkg}: a RegExp route under a mounted router is noted with the mount path`, async () => {
    const pattern = /^\/export\/(\d+)$/;
    const routes = await hangOn(
      pkg,
      (app, hang, express) => {
        const router = express.Router();
        router.get(pattern, hang);
        app.use('/api', router);
      },
      '/api/export/12',
    );
    assert.equal(routes?.[0].route, `/api${String(pattern)}`);
    assert.equal(routes[0].handler?.name, 'leaveHanging');
  });
}

test('a route with a string path keeps its mount path and handler', async () => {
  const routes = await hangOn(
    'express4',
    (app, hang, express) => {
      const router = express.Router();
      router.get('/items/:id', hang);
      app.use('/v1', router);
    },
    '/v1/items/3',
  );
  assert.equal(routes?.[0].route, '/v1/items/:id');
  assert.equal(routes[0].handler?.name, 'leaveHanging');
});

/** The prototype of the layers Express keeps in `app`'s router (Express 4's `_router`, Express 5's `router`). */
function layerPrototype(app: App): object {
  const router =
    (app as unknown as { _router?: { stack: object[] }; router?: { stack: object[] } })._router ??
    (app as unknown as { router: { stack: object[] } }).router;
  return Object.getPrototypeOf(router.stack[0]) as object;
}

for (const pkg of ['express4', 'express417', 'express'] as const) {
  test(`${pkg}: with the agent's layer stamps, a middleware that neither answers nor calls next is noted as a middleware, a route's function as its handler`, async () => {
    const held = await hangOn(
      pkg,
      (app, hang) => {
        app.use('/', function requireToken(req: unknown, res: unknown) {
          hang(req, res);
        } as unknown as never);
        stampExpressLayer(layerPrototype(app));
        app.get('/items/:id', () => undefined);
      },
      '/items/3',
    );
    assert.equal(held?.[0].handler?.name, 'requireToken');
    assert.equal(held[0].handlerKind, 'middleware');
    const routed = await hangOn(
      pkg,
      (app, hang) => {
        app.get('/items/:id', hang);
        stampExpressLayer(layerPrototype(app));
      },
      '/items/3',
    );
    assert.equal(routed?.[0].handler?.name, 'leaveHanging');
    assert.equal(routed[0].handlerKind, 'handler');
  });
}

for (const pkg of ['express4', 'express'] as const) {
  test(`${pkg}: a function that is both a middleware and a route's handler is told by the layer that holds the request`, async () => {
    // The kind is read off the layer the request was last handed to, not kept per function: the
    // same function passed the request on as `use`'s middleware before it held it as the route's handler.
    const routes = await hangOn(
      pkg,
      (app, hang) => {
        const gate = function gate(req: { route?: unknown }, res: unknown, next: () => void) {
          if (req.route === undefined) next();
          else hang(req, res);
        };
        app.use('/', gate as unknown as never);
        app.get('/items/:id', gate as unknown as Handler);
        stampExpressLayer(layerPrototype(app));
      },
      '/items/3',
    );
    assert.equal(routes?.[0].handler?.name, 'gate');
    assert.equal(routes[0].handlerKind, 'handler');
  });
}
