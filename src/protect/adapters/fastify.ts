// Fastify plugin: an onRequest hook on the instance it is registered on. It sets the
// skip-override symbol itself (what fastify-plugin does), so the hook covers the parent
// scope without fastify-plugin as a dependency.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Protector } from '../protector.js';

/** The parts of Fastify's request, reply and instance the plugin uses (Fastify is not a dependency). */
export interface FastifyLikeRequest {
  raw: IncomingMessage;
}

export interface FastifyLikeReply {
  raw: ServerResponse;
  code(statusCode: number): FastifyLikeReply;
  header(key: string, value: string): FastifyLikeReply;
  send(payload?: unknown): FastifyLikeReply;
  hijack(): FastifyLikeReply;
}

type OnRequestHook = (request: FastifyLikeRequest, reply: FastifyLikeReply, done: (err?: Error) => void) => void;

export interface FastifyLikeInstance {
  addHook(name: 'onRequest', hook: OnRequestHook): unknown;
}

export interface FastifyPlugin {
  (instance: FastifyLikeInstance, opts: Record<string, unknown>, done: (err?: Error) => void): void;
  [key: symbol]: unknown;
}

export function fastifyAdapter(guard: Protector): FastifyPlugin {
  const hook: OnRequestHook = (request, reply, done) => {
    const reason = guard.shouldShed(request.raw);
    if (reason === null) return done();
    if (guard.onPressure !== undefined) {
      reply.hijack();
      guard.respond(request.raw, reply.raw, reason);
      return;
    }
    const start = performance.now();
    const r = guard.shedResponse(request.raw, reason);
    reply
      .code(503)
      .header('retry-after', String(r.headers['retry-after']))
      .header('cache-control', 'no-store')
      .header('content-type', String(r.headers['content-type']))
      .send(r.body);
    guard.shedDone(start);
  };
  // A function with symbol-keyed metadata: typed through a cast, the keys are set right below.
  const plugin = ((instance: FastifyLikeInstance, _opts: Record<string, unknown>, done: (err?: Error) => void) => {
    instance.addHook('onRequest', hook);
    done();
  }) as FastifyPlugin;
  plugin[Symbol.for('skip-override')] = true;
  plugin[Symbol.for('fastify.display-name')] = 'hotpath-protect';
  plugin[Symbol.for('plugin-meta')] = { name: 'hotpath-protect', fastify: '>=4' };
  return plugin;
}
