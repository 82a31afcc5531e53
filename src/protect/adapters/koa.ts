// Koa adapter: middleware to put first in the chain. The default 503 goes through Koa's own
// response (so logging middleware above it sees the status); a custom onPressure handler
// gets the raw objects, with Koa's response turned off.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Protector } from '../protector.js';

/** The part of Koa's context this middleware uses (Koa is not a dependency). */
export interface KoaLikeContext {
  req: IncomingMessage;
  res: ServerResponse;
  status: number;
  body: unknown;
  respond?: boolean;
  set(field: string, value: string): void;
}

export type KoaMiddleware = (ctx: KoaLikeContext, next: () => Promise<unknown>) => Promise<void>;

export function koaAdapter(guard: Protector): KoaMiddleware {
  return async function hotpathProtect(ctx, next) {
    const reason = guard.shouldShed(ctx.req);
    if (reason === null) {
      await next();
      return;
    }
    if (guard.handler !== undefined) {
      ctx.respond = false;
      guard.respond(ctx.req, ctx.res, reason);
      return;
    }
    const r = guard.shedResponse(ctx.req, reason);
    ctx.status = 503;
    ctx.set('Retry-After', String(r.headers['retry-after']));
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Content-Type', String(r.headers['content-type']));
    ctx.body = r.body;
  };
}
