// Restify adapter: a `server.pre()` (or `use()`) handler; `next(false)` ends the chain
// after a shed request was answered.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Protector } from '../protector.js';

export type RestifyHandler = (req: IncomingMessage, res: ServerResponse, next: (arg?: false) => void) => void;

export function restifyAdapter(guard: Protector): RestifyHandler {
  return function hotpathProtect(req, res, next) {
    const reason = guard.shouldShed(req);
    if (reason === null) return next();
    guard.respond(req, res, reason);
    next(false);
  };
}
