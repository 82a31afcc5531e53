// Server-side HTTP over diagnostics_channel (`http.server.request.start` ->
// `http.server.response.finish`): per-request latency, status codes, connections and
// keep-alive reuse. O(1) per request, no async_hooks: start times live in a WeakMap keyed
// by the response, request counts in a WeakMap keyed by the socket.
import * as dc from 'node:diagnostics_channel';
import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';
import type { SampleMessage } from '../protocol.js';
import { threadState } from '../thread-state.js';
import { listen } from '../originals.js';
import { summarize } from './histogram-summary.js';
import type { EventEmitter } from 'node:events';

const START = 'http.server.request.start';
const FINISH = 'http.server.response.finish';

type HttpStats = NonNullable<SampleMessage['http']>;
interface ChannelMessage { request?: object; response?: { statusCode?: number }; socket?: EventEmitter }

export class HttpCollector {
  private readonly startTimes = new WeakMap<object, number>();
  /** Per connection: requests served, and requests in flight (aborted ones never finish). */
  private readonly sockets = new WeakMap<object, { served: number; inflight: number }>();
  private latency: RecordableHistogram = createHistogram();
  private statusCodes = new Map<number, number>();
  private started = 0;
  private finished = 0;
  private connections = 0;
  private reused = 0;
  private closed = 0;
  private closedRequests = 0;
  private openConnections = 0;
  private seenAny = false;
  // A subscriber that throws would surface as an uncaught exception in the target: never let it.
  private readonly onStart = (m: unknown): void => { try { this.requestStarted(m as ChannelMessage); } catch { /* counted nowhere */ } };
  private readonly onFinish = (m: unknown): void => { try { this.responseFinished(m as ChannelMessage); } catch { /* counted nowhere */ } };
  private readonly onSocketClose: (this: object) => void;

  constructor() {
    const self = this;
    // One shared function (not a closure per socket): `this` is the socket that closed.
    this.onSocketClose = function (this: object) {
      const rec = self.sockets.get(this);
      self.closed++;
      self.openConnections--;
      if (rec === undefined) return;
      self.closedRequests += rec.served;
      threadState.activeRequests -= rec.inflight;
      rec.inflight = 0;
    };
  }

  start(): void {
    dc.subscribe(START, this.onStart);
    dc.subscribe(FINISH, this.onFinish);
  }

  stop(): void {
    dc.unsubscribe(START, this.onStart);
    dc.unsubscribe(FINISH, this.onFinish);
  }

  /** The interval's numbers, then reset; undefined until the thread served a request. */
  take(): HttpStats | undefined {
    if (!this.seenAny) return undefined;
    const stats: HttpStats = {
      started: this.started,
      finished: this.finished,
      active: threadState.activeRequests,
      connections: this.connections,
      openConnections: this.openConnections,
      latency: summarize(this.latency, 1e-3),
      statusCodes: Object.fromEntries([...this.statusCodes].map(([k, v]) => [String(k), v])),
      reused: this.reused,
      closed: this.closed,
      requestsPerClosedConnection: this.closed === 0 ? 0 : Math.round((this.closedRequests / this.closed) * 100) / 100,
    };
    this.started = this.finished = this.connections = this.reused = this.closed = this.closedRequests = 0;
    this.statusCodes = new Map();
    this.latency.reset();
    return stats;
  }

  private requestStarted(m: ChannelMessage): void {
    this.seenAny = true;
    this.started++;
    threadState.activeRequests++;
    if (m.response !== undefined) this.startTimes.set(m.response, performance.now());
    const socket = m.socket;
    if (socket === undefined) return;
    const rec = this.sockets.get(socket);
    if (rec === undefined) {
      this.connections++;
      this.openConnections++;
      listen(socket, 'close', this.onSocketClose);
      this.sockets.set(socket, { served: 1, inflight: 1 });
    } else {
      this.reused++;
      rec.served++;
      rec.inflight++;
    }
  }

  private responseFinished(m: ChannelMessage): void {
    const res = m.response;
    if (res === undefined) return;
    const t0 = this.startTimes.get(res);
    if (t0 === undefined) return;
    this.startTimes.delete(res);
    this.finished++;
    const rec = m.socket === undefined ? undefined : this.sockets.get(m.socket);
    if (rec === undefined || rec.inflight > 0) threadState.activeRequests--;
    if (rec !== undefined && rec.inflight > 0) rec.inflight--;
    // µs, at least 1: the histogram refuses values below 1.
    this.latency.record(Math.max(1, Math.round((performance.now() - t0) * 1000)));
    const code = res.statusCode ?? 0;
    this.statusCodes.set(code, (this.statusCodes.get(code) ?? 0) + 1);
  }
}
