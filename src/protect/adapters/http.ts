// node:http adapter: wraps a request listener so shed requests never reach it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Protector } from '../protector.js';

export type HttpHandler<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = (
  req: Req,
  res: Res,
) => void | Promise<void>;

export function httpAdapter<Req extends IncomingMessage, Res extends ServerResponse>(
  guard: Protector,
  handler: HttpHandler<Req, Res>,
): HttpHandler<Req, Res> {
  return function protectedHandler(req, res) {
    const reason = guard.shouldShed(req);
    if (reason !== null) return guard.respond(req, res, reason);
    return handler(req, res);
  };
}
