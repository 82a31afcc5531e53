// Express / Connect adapter: middleware that answers shed requests and passes the rest on.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Protector } from '../protector.js';

export type ConnectMiddleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

export function expressAdapter(guard: Protector): ConnectMiddleware {
  return function hotpathProtect(req, res, next) {
    const reason = guard.shouldShed(req);
    if (reason !== null) guard.respond(req, res, reason);
    else next();
  };
}
