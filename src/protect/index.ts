// hotpath/protect: overload protection for Node.js servers. Answers 503 with Retry-After
// when the event loop is late (or utilization or memory is over a limit), so latency stays
// bounded and a balancer retries elsewhere. Independent of the rest of hotpath.

export { protect, Protector } from './protector.js';
export type { PressureStatus } from './pressure-monitor.js';
export type { ProtectOptions, PressureReason, PressureHandler, ExemptOption } from './protect-options.js';
export type { HttpHandler } from './adapters/http.js';
export type { ConnectMiddleware } from './adapters/express.js';
export type { FastifyPlugin, FastifyLikeInstance, FastifyLikeReply, FastifyLikeRequest } from './adapters/fastify.js';
export type { KoaMiddleware, KoaLikeContext } from './adapters/koa.js';
export type { RestifyHandler } from './adapters/restify.js';
