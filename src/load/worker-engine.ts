// The load loop of one worker thread: its connections, the closed or open (scheduled)
// model, per-request timeouts by a periodic sweep, counters in a typed array, and
// HdrHistograms shipped to the main thread once per second as compressed deltas.

import { performance } from 'node:perf_hooks';
import { ArrivalSchedule } from './arrival-schedule.js';
import { Connection, type ConnectionOwner, type DropReason } from './connection.js';
import { createHistogram, encodeHistogram, MAX_TRACKABLE_US, type Histogram } from './histogram.js';
import {
  C_BYTES_READ,
  C_BYTES_WRITTEN,
  C_CLOSED_BY_SERVER,
  C_COMPLETED,
  C_LATE,
  C_OPENED,
  C_PARSE,
  C_SENT,
  C_SOCKET_ERRORS,
  C_TIMEOUTS,
  COUNTERS,
  type IntervalData,
  type WorkerConfig,
  type WorkerFinal,
  type WorkerTarget,
} from './worker-protocol.js';

/** A scheduled send that leaves more than this after its planned time counts as late. */
export const LATE_SEND_MS = 5;
/** Wait before reconnecting when a connection failed before it ever connected. */
const CONNECT_RETRY_MS = 100;

type CpuUsageFn = (previous?: NodeJS.CpuUsage) => NodeJS.CpuUsage;

function toUs(ms: number): number {
  const us = Math.round(ms * 1000);
  return us < 1 ? 1 : us > MAX_TRACKABLE_US ? MAX_TRACKABLE_US : us;
}

export class WorkerEngine implements ConnectionOwner {
  readonly target: WorkerTarget;
  readonly templates: { bytes: Buffer; head: boolean }[];
  readonly keepalive: boolean;
  private readonly counters = new Float64Array(COUNTERS);
  private readonly statuses = new Float64Array(600);
  private readonly errors = new Map<string, number>();
  private readonly latency: Histogram = createHistogram();
  private readonly service: Histogram | null;
  private readonly conns: Connection[] = [];
  private readonly open: boolean;
  private stopped = false;
  private measuring = false;
  private inFlight = 0;
  /** Closed model: requests still allowed to start (the worker's share of -a). */
  private toStart = Infinity;
  /** Closed model: starts set aside for connections that are reconnecting (so -a opens no spare connection). */
  private reserved = 0;
  private amountMode = false;
  /** Open model: the arrival plan (null in the closed model). */
  private readonly schedule: ArrivalSchedule | null;
  /** performance.now() at the start of the measured window; requests sent before it are warm-up. */
  private measureStartAt = Infinity;
  private readonly freeSlots: number[] = [];
  private timerArmed = false;
  private maxLagMs = 0;
  private sweepTimer: NodeJS.Timeout | null = null;
  private tickTimer: NodeJS.Timeout | null = null;
  private eluStart = performance.eventLoopUtilization();
  private cpuStart: NodeJS.CpuUsage | undefined;

  constructor(
    private readonly cfg: WorkerConfig,
    private readonly post: (msg: unknown) => void,
  ) {
    this.target = cfg.target;
    this.keepalive = cfg.keepalive;
    this.templates = cfg.templates.map((t) => ({
      bytes: Buffer.from(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength),
      head: t.head,
    }));
    this.open = cfg.rate !== undefined;
    this.schedule = this.open ? new ArrivalSchedule(1000 / (cfg.rate as number), cfg.rateOffsetMs) : null;
    this.service = this.open ? createHistogram() : null;
    for (let i = 0; i < cfg.connections; i++) this.conns.push(new Connection(i, this, cfg.pipelining));
  }

  /** Opens every connection and starts sending; `measure` false means warm-up first. */
  run(measure: boolean): void {
    this.schedule?.start(performance.now());
    for (const c of this.conns) c.open();
    const sweepMs = Math.min(1000, Math.max(10, this.cfg.timeoutMs / 10));
    this.sweepTimer = setInterval(this.sweep, sweepMs);
    if (this.open) this.arm(this.cfg.rateOffsetMs);
    if (measure) this.measure();
  }

  /** Starts the measured window: everything counted so far was warm-up. */
  measure(): void {
    if (this.measuring || this.stopped) return;
    this.measuring = true;
    this.resetInterval();
    this.measureStartAt = performance.now();
    this.eluStart = performance.eventLoopUtilization();
    this.cpuStart = threadCpu()?.();
    if (this.cfg.amount !== undefined) {
      this.amountMode = true;
      if (this.schedule) this.schedule.allow(this.cfg.amount);
      else this.toStart = this.cfg.amount;
    }
    this.tickTimer = setInterval(() => this.post({ type: 'tick', ...this.takeInterval() }), 1000);
    this.checkDone();
  }

  stop(): void {
    if (this.stopped) return;
    const end = performance.now();
    this.stopped = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.tickTimer) clearInterval(this.tickTimer);
    let inFlight = 0;
    for (const c of this.conns) {
      inFlight += c.inFlight;
      c.close();
    }
    const final: WorkerFinal = { type: 'final', ...this.takeInterval(), inFlight, ...this.scheduleTotals(end), ...this.usage() };
    this.post(final);
  }

  // ConnectionOwner: called by connections.

  connected(conn: Connection): void {
    this.counters[C_OPENED]++;
    if (this.stopped) return;
    if (this.open) {
      for (let i = 0; i < conn.depth; i++) this.freeSlots.push(conn.id);
      this.dispatch(performance.now());
    } else {
      conn.cork();
      this.refill(conn, performance.now());
      conn.uncork();
    }
  }

  sent(bytes: number): void {
    this.inFlight++;
    this.counters[C_SENT]++;
    this.counters[C_BYTES_WRITTEN] += bytes;
  }

  received(bytes: number): void {
    this.counters[C_BYTES_READ] += bytes;
  }

  completed(conn: Connection, status: number, sendAt: number, intendedAt: number): void {
    if (this.stopped) return;
    const now = performance.now();
    this.inFlight--;
    if (sendAt >= this.measureStartAt) {
      this.record(now, sendAt, intendedAt);
      this.statuses[status]++;
      this.counters[C_COMPLETED]++;
    }
    if (!conn.recycle) {
      if (this.open) {
        this.freeSlots.push(conn.id);
        this.dispatch(now);
      } else this.refill(conn, now);
    }
    if (this.amountMode) this.checkDone();
  }

  dropped(conn: Connection, lost: number, reason: DropReason, code?: string): void {
    if (this.stopped) return;
    this.inFlight -= lost;
    if (reason === 'parse') this.counters[C_PARSE]++;
    else if (reason === 'recycle' && lost > 0)
      this.countError('EOF'); // closed with pipelined requests unanswered
    else if (code !== undefined) this.countError(code);
    if (conn.takeClosedByServer() || reason === 'idle-close') this.counters[C_CLOSED_BY_SERVER]++;
    this.release(conn);
    if (this.amountMode) this.checkDone();
    if (this.stopped || this.nothingLeftToSend()) return;
    if (!this.open && this.amountMode && this.reserve(conn) === 0) return; // the others will send the rest
    if (reason === 'error' && !conn.everConnected) setTimeout(() => this.reopen(conn), CONNECT_RETRY_MS);
    else conn.open();
  }

  private countError(code: string): void {
    this.counters[C_SOCKET_ERRORS]++;
    this.errors.set(code, (this.errors.get(code) ?? 0) + 1);
  }

  private reopen(conn: Connection): void {
    if (!this.stopped && conn.socket === null) conn.open();
  }

  private record(now: number, sendAt: number, intendedAt: number): void {
    if (this.service !== null) {
      this.latency.recordValue(toUs(now - intendedAt));
      this.service.recordValue(toUs(now - sendAt));
    } else {
      this.latency.recordValue(toUs(now - sendAt));
    }
  }

  /** Closed model: keep the connection's pipeline full while requests may start. */
  private refill(conn: Connection, now: number): void {
    while (conn.inFlight < conn.depth) {
      if (conn.reserved > 0) {
        conn.reserved--;
        this.reserved--;
      } else if (this.toStart > 0) this.toStart--;
      else break;
      conn.send(now, now);
    }
  }

  private reserve(conn: Connection): number {
    const n = Math.min(conn.depth, this.toStart);
    this.toStart -= n;
    this.reserved += n;
    conn.reserved = n;
    return n;
  }

  private release(conn: Connection): void {
    this.toStart += conn.reserved;
    this.reserved -= conn.reserved;
    conn.reserved = 0;
  }

  /** Open model: makes every send that is due, on any connection with a free slot. */
  private dispatch(now: number): void {
    const plan = this.schedule as ArrivalSchedule;
    while (!plan.exhausted && !this.stopped) {
      const due = plan.dueAt(plan.next);
      if (due > now) {
        this.arm(due - now);
        return;
      }
      const conn = this.popFree();
      if (conn === null) return; // the next freed slot dispatches again
      const lag = now - due;
      if (lag > LATE_SEND_MS && this.measuring) this.counters[C_LATE]++;
      if (lag > this.maxLagMs && this.measuring) this.maxLagMs = lag;
      plan.next++;
      conn.send(due, now);
    }
  }

  private popFree(): Connection | null {
    while (this.freeSlots.length > 0) {
      const c = this.conns[this.freeSlots.pop() as number];
      if (c.isConnected && !c.recycle && c.inFlight < c.depth) return c;
    }
    return null;
  }

  private arm(delayMs: number): void {
    if (this.timerArmed) return;
    this.timerArmed = true;
    setTimeout(this.onTimer, delayMs);
  }

  private readonly onTimer = (): void => {
    this.timerArmed = false;
    this.dispatch(performance.now());
  };

  /** Times out requests (and connects) older than --timeout: counted, recorded, connection reopened. */
  private readonly sweep = (): void => {
    const now = performance.now();
    const limit = this.cfg.timeoutMs;
    for (const c of this.conns) {
      if (c.isConnected && c.inFlight > 0 && now - c.oldestSendAt() >= limit) {
        c.forEachInFlight((sendAt, intendedAt) => {
          if (sendAt < this.measureStartAt) return; // a warm-up request
          this.counters[C_TIMEOUTS]++;
          const waited = Math.min(now - sendAt, limit);
          this.record(sendAt + waited, sendAt, intendedAt);
        });
        this.dropped(c, c.close(), 'timeout');
      } else if (!c.isConnected && c.socket !== null && now - c.openedAt >= limit) {
        this.dropped(c, c.close(), 'error', 'ETIMEDOUT');
      }
    }
  };

  /** With -a, once every request has been started a dropped connection need not come back. */
  private nothingLeftToSend(): boolean {
    return this.amountMode && (this.schedule ? this.schedule.exhausted : this.toStart === 0 && this.reserved === 0);
  }

  private checkDone(): void {
    if (!this.amountMode || this.stopped || this.inFlight > 0) return;
    if (this.schedule ? this.schedule.exhausted : this.toStart === 0 && this.reserved === 0) this.stop();
  }

  private resetInterval(): void {
    this.counters.fill(0);
    this.statuses.fill(0);
    this.errors.clear();
    this.latency.reset();
    this.service?.reset();
    this.maxLagMs = 0;
  }

  /** The interval's deltas (then reset): one message per second. */
  private takeInterval(): IntervalData {
    const statuses: [number, number][] = [];
    for (let s = 0; s < this.statuses.length; s++) if (this.statuses[s] > 0) statuses.push([s, this.statuses[s]]);
    const data: IntervalData = {
      counters: Array.from(this.counters),
      statuses,
      errors: Object.fromEntries(this.errors),
      latency: encodeHistogram(this.latency),
      maxLagMs: this.maxLagMs,
    };
    if (this.service !== null) data.service = encodeHistogram(this.service);
    this.resetInterval();
    return data;
  }

  private scheduleTotals(end: number): { dropped: number; intended: number } {
    if (this.schedule === null || this.measureStartAt === Infinity) return { dropped: 0, intended: 0 };
    return this.schedule.totals(this.measureStartAt, end);
  }

  private usage(): { elu: number; cpuUserMs?: number; cpuSystemMs?: number } {
    const elu = performance.eventLoopUtilization(this.eluStart).utilization;
    const cpu = threadCpu();
    if (cpu === undefined || this.cpuStart === undefined) return { elu };
    const now = cpu(this.cpuStart);
    return { elu, cpuUserMs: now.user / 1000, cpuSystemMs: now.system / 1000 };
  }
}

/** process.threadCpuUsage (Node 22+): this thread's CPU time; undefined on older Node. */
function threadCpu(): CpuUsageFn | undefined {
  const fn = (process as unknown as { threadCpuUsage?: CpuUsageFn }).threadCpuUsage;
  return fn === undefined ? undefined : fn.bind(process);
}
