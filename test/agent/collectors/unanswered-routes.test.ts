// Unanswered routes on requests as node leaves them on a connection: the function a router
// stamped on the request is named before the server's listener, and a URL without a route
// pattern counts by its shape (ids as `:id`), so requests to one route by different ids add up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UnansweredRoutes, urlShape } from '../../../src/agent/collectors/unanswered-routes.js';
import { FASTIFY_CALL, LAST_HANDLER, stamping } from '../../../src/agent/hooks/last-handler.js';

test('urlShape: numbers, UUIDs and long hex segments read :id; words and short hex stay', () => {
  assert.equal(urlShape('/orders/42'), '/orders/:id');
  assert.equal(urlShape('/u/3f2a9c1e-0b7d-4a7e-9c11-2b5e8f0a6d44/cart'), '/u/:id/cart');
  assert.equal(urlShape('/blobs/0123456789abcdef'), '/blobs/:id');
  assert.equal(urlShape('/cafe/menu'), '/cafe/menu');
  assert.equal(urlShape('/'), '/');
});

function requireKey(): void {}
function listener(): void {}

/** A connection whose response waits, for a request that went `method url`, stamped with `last` when given. */
function waiting(url: string, last?: unknown) {
  const req: Record<PropertyKey, unknown> = { method: 'GET', url };
  if (last !== undefined) req[LAST_HANDLER] = last;
  return { _httpMessage: { req, writableEnded: false }, server: { listeners: () => [listener] } };
}

test('a stamped request names the function stamped on it, and requests by different ids count as one route', () => {
  const routes = new UnansweredRoutes();
  routes.note(waiting('/orders/17?x=1', requireKey), 1, 4000);
  routes.note(waiting('/orders/2048', requireKey), 1, 3000);
  const [entry, ...rest] = routes.take()!;
  assert.deepEqual(rest, []);
  assert.equal(entry.route, '/orders/:id');
  assert.equal(entry.count, 2);
  assert.equal(entry.oldestMs, 4000);
  assert.equal(entry.handler?.name, 'requireKey');
  assert.notEqual(entry.listener, true);
});

test('without a stamp the server listener is named, as before', () => {
  const routes = new UnansweredRoutes();
  routes.note(waiting('/ping'), 1, undefined);
  const [entry] = routes.take()!;
  assert.equal(entry.handler?.name, 'listener');
  assert.equal(entry.listener, true);
});

test('stamping: a wrapper keeps name and length, stamps the request, passes this and arguments, and is not wrapped twice', () => {
  function mw(this: unknown, req: object, res: object, next: () => string): string {
    assert.equal(this, thisArg);
    return next();
  }
  const thisArg = {};
  const w = stamping(mw) as typeof mw;
  assert.equal(w.name, 'mw');
  assert.equal(w.length, 3);
  assert.equal(stamping(w), w);
  const req: Record<PropertyKey, unknown> = {};
  assert.equal(
    w.call(thisArg, req, {}, () => 'next'),
    'next',
  );
  assert.equal(req[LAST_HANDLER], mw);
  // Error handlers (four arguments: the error first) are left as they are.
  const onError = (err: unknown, req: unknown, res: unknown, next: unknown) => [err, req, res, next];
  assert.equal(stamping(onError), onError);
});

test("a request Fastify handed to a route: the route's pattern and the handler its route context holds (bound, as Fastify binds it)", () => {
  function showAccount(): void {}
  const context = Symbol('fastify.context');
  const conn = waiting('/accounts/42');
  conn._httpMessage.req[FASTIFY_CALL] = {
    request: { [context]: { handler: showAccount.bind({}) } },
    route: { url: '/accounts/:id', method: 'GET' },
  };
  const routes = new UnansweredRoutes();
  routes.note(conn, 1, 2000);
  const [entry] = routes.take()!;
  assert.equal(entry.route, '/accounts/:id');
  assert.equal(entry.pattern, true);
  assert.equal(entry.handler?.name, 'showAccount');
  // The bound function's target's location: the line after this test's `function showAccount` marker.
  assert.ok((entry.handler?.line ?? 0) > 0, JSON.stringify(entry.handler));
});
