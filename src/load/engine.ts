// The main-thread side of the load engine: starts the worker threads, walks them through
// warm-up, measurement and stop (see worker-protocol.ts for the message diagram), and
// merges their per-second reports losslessly (counters summed, histograms added).

import { Worker } from 'node:worker_threads';
import type { Histogram } from './histogram.js';
import { aborted, sleep } from './abortable-sleep.js';
import { mergeSlot, Totals, type IntervalPoint } from './interval-merge.js';
import type { RequestTemplate } from './request-template.js';
import type { GeneratorWorkerStats, TimelinePoint } from './load-result.js';
import {
  type IntervalData,
  type MainToWorker,
  type WorkerConfig,
  type WorkerFinal,
  type WorkerTarget,
  type WorkerToMain,
} from './worker-protocol.js';

export type { IntervalPoint } from './interval-merge.js';

export type LoadPhase = 'warmup-start' | 'load-start' | 'load-end';

export interface EnginePlan {
  target: WorkerTarget;
  templates: RequestTemplate[];
  connections: number;
  pipelining: number;
  workers: number;
  keepalive: boolean;
  timeoutMs: number;
  rate?: number;
  amount?: number;
  /** Seconds of measurement (ignored with amount). */
  duration: number;
  warmup: number;
}

export interface EngineHooks {
  signal?: AbortSignal;
  onPhase?(phase: LoadPhase, epochMs: number): void;
  onInterval?(point: IntervalPoint): void;
}

export interface EngineOutput {
  start: number;
  end: number;
  latency: Histogram;
  service: Histogram | null;
  counters: number[];
  statuses: Record<string, number>;
  errors: Record<string, number>;
  timeline: TimelinePoint[];
  workers: GeneratorWorkerStats[];
  inFlight: number;
  dropped: number;
  intended: number;
  maxLagMs: number;
  cpu: NodeJS.CpuUsage;
  stoppedEarly?: string;
}

/** Splits n into `parts` near-equal integers (the first ones get the remainder). */
export function split(n: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(n / parts) + (i < n % parts ? 1 : 0));
}

interface Slot {
  reports: number;
  data: IntervalData[];
}

export async function runEngine(plan: EnginePlan, hooks: EngineHooks = {}): Promise<EngineOutput> {
  const n = Math.max(1, Math.min(plan.workers, plan.connections));
  const conns = split(plan.connections, n);
  const amounts = plan.amount === undefined ? undefined : splitByWeight(plan.amount, conns);
  const configs: WorkerConfig[] = conns.map((c, i) => ({
    index: i,
    target: plan.target,
    connections: c,
    pipelining: plan.pipelining,
    keepalive: plan.keepalive,
    timeoutMs: plan.timeoutMs,
    templates: plan.templates.map((t) => ({ bytes: t.bytes, head: t.head })),
    rate: plan.rate === undefined ? undefined : (plan.rate * c) / plan.connections,
    rateOffsetMs: plan.rate === undefined ? 0 : (i * 1000) / plan.rate,
    amount: amounts?.[i],
  }));
  const run = new EngineRun(configs, hooks);
  try {
    return await run.execute(plan);
  } finally {
    await run.terminate();
  }
}

function splitByWeight(total: number, weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const out = weights.map((w) => Math.floor((total * w) / sum));
  for (let i = 0, rest = total - out.reduce((a, b) => a + b, 0); rest > 0; i++, rest--) out[i % out.length]++;
  return out;
}

class EngineRun {
  private readonly workers: Worker[];
  private readonly finals: (WorkerFinal | undefined)[];
  private readonly slots: Slot[] = [];
  private readonly received: number[];
  private readonly totals: Totals;
  private emitted = 0;
  private windowStart = 0;
  private windowEnd = Infinity;
  private stopSentAt = 0;
  private onAllFinal: (() => void) | null = null;
  private failure: ((err: Error) => void) | null = null;

  constructor(
    private readonly configs: WorkerConfig[],
    private readonly hooks: EngineHooks,
  ) {
    this.workers = configs.map((cfg) => new Worker(new URL('./load-worker.js', import.meta.url), { workerData: cfg }));
    this.finals = configs.map(() => undefined);
    this.received = configs.map(() => 0);
    this.totals = new Totals(configs[0].rate !== undefined);
  }

  async execute(plan: EnginePlan): Promise<EngineOutput> {
    const failed = new Promise<never>((_, reject) => {
      this.failure = reject;
    });
    failed.catch(() => {});
    const allFinal = new Promise<void>((resolve) => {
      this.onAllFinal = resolve;
    });
    const ready = Promise.all(this.workers.map((w, i) => this.listen(w, i)));
    await Promise.race([ready, failed]);
    const signal = this.hooks.signal;
    let stoppedEarly: string | undefined;
    const abortReason = () => {
      const r: unknown = signal?.reason;
      return r instanceof Error ? r.message : typeof r === 'string' ? r : 'aborted';
    };
    if (plan.warmup > 0) {
      this.hooks.onPhase?.('warmup-start', Date.now());
      this.broadcast({ type: 'run', measure: false });
      if (!(await sleep(plan.warmup * 1000, signal))) stoppedEarly = abortReason();
      this.broadcast({ type: 'measure' });
    } else {
      this.broadcast({ type: 'run', measure: true });
    }
    const start = Date.now();
    this.windowStart = start;
    const cpuStart = process.cpuUsage();
    this.hooks.onPhase?.('load-start', start);
    if (stoppedEarly === undefined) {
      if (plan.amount === undefined) {
        if (!(await Promise.race([sleep(plan.duration * 1000, signal), failed]))) stoppedEarly = abortReason();
      } else if (!(await Promise.race([allFinal.then(() => true), aborted(signal), failed]))) {
        stoppedEarly = abortReason();
      }
    }
    this.stopSentAt = Date.now();
    this.broadcast({ type: 'stop' });
    await Promise.race([allFinal, failed]);
    const end = this.finals.some((f) => f === undefined) ? this.stopSentAt : Math.min(this.stopSentAt, this.lastFinalAt);
    const cpu = process.cpuUsage(cpuStart);
    this.windowEnd = end;
    this.flushSlots(true);
    this.hooks.onPhase?.('load-end', end);
    return this.output(start, end, cpu, stoppedEarly);
  }

  private lastFinalAt = 0;

  private listen(w: Worker, i: number): Promise<void> {
    return new Promise((resolve) => {
      w.on('message', (msg: WorkerToMain) => {
        if (msg.type === 'ready') resolve();
        else if (msg.type === 'tick') this.addInterval(i, msg);
        else if (msg.type === 'final') this.addFinal(i, msg);
        else if (msg.type === 'fatal') this.failure?.(new Error(`load worker ${i} failed: ${msg.message}`));
      });
      w.on('error', (err) => this.failure?.(err));
      w.on('exit', (code) => {
        if (this.finals[i] === undefined) this.failure?.(new Error(`load worker ${i} exited (code ${code}) before reporting`));
      });
    });
  }

  private broadcast(msg: MainToWorker): void {
    for (let i = 0; i < this.workers.length; i++) if (this.finals[i] === undefined) this.workers[i].postMessage(msg);
  }

  private addInterval(i: number, data: IntervalData): void {
    const k = this.received[i]++;
    while (this.slots.length <= k) this.slots.push({ reports: 0, data: [] });
    this.slots[k].reports++;
    this.slots[k].data.push(data);
    this.flushSlots(false);
  }

  private addFinal(i: number, msg: WorkerFinal): void {
    this.addInterval(i, msg);
    this.finals[i] = msg;
    this.lastFinalAt = Date.now();
    this.flushSlots(false);
    if (this.finals.every((f) => f !== undefined)) this.onAllFinal?.();
  }

  /** Merges each second once every running worker has reported it. */
  private flushSlots(all: boolean): void {
    while (this.emitted < this.slots.length) {
      const k = this.emitted;
      const expected = this.workers.filter((_, i) => this.finals[i] === undefined || this.received[i] > k).length;
      if (!all && this.slots[k].reports < expected) return;
      const lengthS = Math.max(0, Math.min(1, (this.windowEnd - this.windowStart) / 1000 - k));
      const point = mergeSlot(k, this.slots[k].data, all ? lengthS : 1);
      this.totals.add(this.slots[k].data, point);
      this.slots[k].data = [];
      this.emitted++;
      this.hooks.onInterval?.(point);
    }
  }

  private output(start: number, end: number, cpu: NodeJS.CpuUsage, stoppedEarly?: string): EngineOutput {
    const t = this.totals;
    const finals = this.finals.filter((f): f is WorkerFinal => f !== undefined);
    const sum = (f: (x: WorkerFinal) => number) => finals.reduce((a, x) => a + f(x), 0);
    return {
      start,
      end,
      latency: t.latency,
      service: t.service,
      counters: t.counters,
      statuses: t.statuses,
      errors: t.errors,
      timeline: t.timeline,
      workers: finals.map((f, i) => ({
        worker: i,
        connections: this.configs[i].connections,
        cpuUserMs: f.cpuUserMs,
        cpuSystemMs: f.cpuSystemMs,
        elu: round3(f.elu),
      })),
      inFlight: sum((f) => f.inFlight),
      dropped: sum((f) => f.dropped),
      intended: sum((f) => f.intended),
      maxLagMs: t.maxLagMs,
      cpu,
      stoppedEarly,
    };
  }

  async terminate(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate().catch(() => 0)));
  }
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
