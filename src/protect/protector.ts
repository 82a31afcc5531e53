// protect(): one guard per process that owns the sampling core and answers shed requests.
// Every framework adapter is a thin wrapper over `shouldShed` + `respond`, so the decision
// and the 503 are the same in node:http, Express, Fastify, Koa and Restify.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { PressureMonitor, type PressureStatus } from './pressure-monitor.js';
import { resolveProtectOptions, type PressureReason, type ProtectOptions, type ResolvedProtectOptions } from './protect-options.js';
import { exemptMatcher, type ExemptMatcher } from './exempt-matcher.js';
import { buildShedResponses, pickShedResponse, writeShedResponse, type ShedResponse, type ShedResponses } from './shed-response.js';
import { httpAdapter, type HttpHandler } from './adapters/http.js';
import { expressAdapter, type ConnectMiddleware } from './adapters/express.js';
import { fastifyAdapter, type FastifyPlugin } from './adapters/fastify.js';
import { koaAdapter, type KoaMiddleware } from './adapters/koa.js';
import { restifyAdapter, type RestifyHandler } from './adapters/restify.js';

export class Protector {
  /** Express and Connect middleware: `app.use(guard.express)`. */
  readonly express: ConnectMiddleware;
  /** Fastify plugin (applies to the whole instance): `await app.register(guard.fastify)`. */
  readonly fastify: FastifyPlugin;
  /** Koa middleware: `app.use(guard.koa)`, first in the chain. */
  readonly koa: KoaMiddleware;
  /** Restify handler: `server.pre(guard.restify)`. */
  readonly restify: RestifyHandler;
  private readonly opts: ResolvedProtectOptions;
  private readonly monitor: PressureMonitor;
  private readonly exempt: ExemptMatcher;
  private readonly responses: ShedResponses;
  private warned = false;

  constructor(options?: ProtectOptions) {
    this.opts = resolveProtectOptions(options);
    this.exempt = exemptMatcher(this.opts.exempt);
    this.responses = buildShedResponses(this.opts.retryAfter);
    this.monitor = new PressureMonitor(this.opts);
    this.express = expressAdapter(this);
    this.fastify = fastifyAdapter(this);
    this.koa = koaAdapter(this);
    this.restify = restifyAdapter(this);
  }

  /** True when a request arriving now (and not exempt) would be shed. */
  isUnderPressure(): boolean {
    return this.monitor.check() !== null;
  }

  /** Current figures, which signal tripped, and how many requests were shed. */
  status(): PressureStatus {
    return this.monitor.status();
  }

  /** Stops sampling (idempotent); afterwards every request passes. Timers never keep the process alive anyway. */
  close(): void {
    this.monitor.close();
  }

  /** Wraps a node:http request listener: `http.createServer(guard.http(handler))`. */
  http<Req extends IncomingMessage, Res extends ServerResponse>(handler: HttpHandler<Req, Res>): HttpHandler<Req, Res> {
    return httpAdapter(this, handler);
  }

  /** Why this request should be shed now, or null. Exempt requests are never shed. Counts shed requests. */
  shouldShed(req: IncomingMessage): PressureReason | null {
    const reason = this.monitor.admit();
    if (reason === null || this.exempt(req)) return null;
    this.monitor.shed++;
    return reason;
  }

  /** The default 503 for this request (JSON or text by its Accept header). */
  shedResponse(req: IncomingMessage, reason: PressureReason): ShedResponse {
    return pickShedResponse(this.responses, req, reason);
  }

  /** The user's onPressure handler, if any. */
  get onPressure(): ResolvedProtectOptions['onPressure'] {
    return this.opts.onPressure;
  }

  /** Answers a shed request on the raw response: the user's onPressure, or the default 503. */
  respond(req: IncomingMessage, res: ServerResponse, reason: PressureReason): void {
    const start = performance.now();
    this.answer(req, res, reason);
    this.shedDone(start);
  }

  /**
   * Adapters that answer through their framework call this after writing a shed response,
   * with the performance.now() taken before: that time is not counted as event-loop delay.
   */
  shedDone(start: number): void {
    this.monitor.addShedTime(performance.now() - start);
  }

  private answer(req: IncomingMessage, res: ServerResponse, reason: PressureReason): void {
    const handler = this.opts.onPressure;
    if (handler === undefined) {
      writeShedResponse(res, this.shedResponse(req, reason));
      return;
    }
    try {
      // A handler typed to return void may return anything (res.end()'s res, null): only a thenable is awaited.
      const p: unknown = handler(req, res, reason);
      if (isThenable(p)) p.then(undefined, (err: unknown) => this.fallback(req, res, reason, err));
    } catch (err) {
      this.fallback(req, res, reason, err);
    }
  }

  /** A throwing onPressure must not take the server down while it is overloaded: answer 503 and warn once. */
  private fallback(req: IncomingMessage, res: ServerResponse, reason: PressureReason, err: unknown): void {
    if (!this.warned) {
      this.warned = true;
      process.emitWarning(
        `onPressure threw: ${err instanceof Error ? err.message : String(err)}; answering 503 instead`,
        'HotpathProtectWarning',
      );
    }
    if (!res.headersSent) writeShedResponse(res, this.shedResponse(req, reason));
    else res.destroy();
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

/** Creates the overload guard. Throws HOTPATH_ERR_PROTECT_OPTION on a bad option. */
export function protect(options?: ProtectOptions): Protector {
  return new Protector(options);
}
