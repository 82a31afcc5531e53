// Koa adapter: middleware to put first in the chain. Shed requests are answered on the raw
// response with Koa's own response turned off (`ctx.respond = false`): a 503 must cost as
// little as possible when the server is overloaded, and its cost is then measurable.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Protector } from '../protector.js';

/** The part of Koa's context this middleware uses (Koa is not a dependency). */
export interface KoaLikeContext {
  req: IncomingMessage;
  res: ServerResponse;
  respond?: boolean;
}

export type KoaMiddleware = (ctx: KoaLikeContext, next: () => Promise<unknown>) => Promise<void>;

export function koaAdapter(guard: Protector): KoaMiddleware {
  return async function hotpathProtect(ctx, next) {
    const reason = guard.shouldShed(ctx.req);
    if (reason === null) {
      await next();
      return;
    }
    ctx.respond = false;
    guard.respond(ctx.req, ctx.res, reason);
  };
}
