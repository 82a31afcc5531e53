// The programmatic API: `load(options)` validates, checks the target is reachable, sends
// the setup requests, drives the load through the worker engine and resolves with the
// LoadResult. The returned promise also emits progress and phase events:
//
//   const run = load({ url: 'http://127.0.0.1:3000/', duration: 5 });
//   run.on('progress', (p) => console.log(p.second, p.requests));
//   run.on('load-start', (epochMs) => startProfiling());
//   const result = await run;

import { EventEmitter } from 'node:events';
import { runEngine, type LoadPhase } from './engine.js';
import { HdrLog } from './hdr-log.js';
import type { LoadResult, TimelinePoint } from './load-result.js';
import { planLoad, resolveLoadFlags, type CheckedLoadOptions, type LoadOptions, type LoadPlan } from './load-plan.js';
import { preflight } from './preflight.js';
import { buildResult } from './result-builder.js';
import { sendSetup } from './setup-requests.js';

export type { LoadOptions } from './load-plan.js';
export type { LoadPhase } from './engine.js';

/** One second of the measured window, merged across workers (1-based `second`), with the running total. */
export interface LoadProgress extends TimelinePoint {
  /** Completed requests so far. */
  totalRequests: number;
}

export interface LoadHooks {
  onProgress?(progress: LoadProgress): void;
  /** `warmup-start`, `load-start`, `load-end`, with the epoch ms they happened at. */
  onPhase?(phase: LoadPhase, epochMs: number): void;
}

export interface LoadEvents {
  progress: [LoadProgress];
  'warmup-start': [number];
  'load-start': [number];
  'load-end': [number];
}

/** A promise of the LoadResult that also emits `progress` and phase events. */
export interface LoadRun extends Promise<LoadResult> {
  on<E extends keyof LoadEvents>(event: E, listener: (...args: LoadEvents[E]) => void): LoadRun;
}

export function load(options: LoadOptions, hooks: LoadHooks = {}): LoadRun {
  return startLoad(() => planLoad(resolveLoadFlags(options)), options.signal, hooks);
}

/** A load whose flags were checked where the API was entered (`run()`): planned, not validated again. */
export function loadChecked(options: CheckedLoadOptions, hooks: LoadHooks = {}): LoadRun {
  return startLoad(() => planLoad(options), options.signal, hooks);
}

function startLoad(makePlan: () => LoadPlan, signal: AbortSignal | undefined, hooks: LoadHooks): LoadRun {
  const events = new EventEmitter();
  const promise = runLoad(makePlan, signal, {
    onProgress: (p) => {
      hooks.onProgress?.(p);
      events.emit('progress', p);
    },
    onPhase: (phase, at) => {
      hooks.onPhase?.(phase, at);
      events.emit(phase, at);
    },
  });
  const run = promise as LoadRun;
  run.on = (event, listener) => {
    events.on(event, listener as (...args: unknown[]) => void);
    return run;
  };
  return run;
}

async function runLoad(makePlan: () => LoadPlan, signal: AbortSignal | undefined, hooks: Required<LoadHooks>): Promise<LoadResult> {
  const plan = makePlan();
  const f = plan.flags;
  const hdrLog = f.hdrLog === undefined ? undefined : new HdrLog(f.hdrLog);
  const target = await preflight({ url: plan.url, socket: f.socket, insecure: f.insecure, timeoutMs: f.timeout });
  const setup = await sendSetup(target, plan.setup, f.timeout);
  let total = 0;
  const out = await runEngine(
    {
      target,
      templates: plan.templates,
      connections: f.connections,
      pipelining: f.pipelining,
      workers: f.workers,
      keepalive: f.keepalive,
      timeoutMs: f.timeout,
      rate: f.rate,
      amount: f.amount,
      duration: f.duration,
      warmup: f.warmup,
    },
    {
      signal,
      onPhase: (phase, at) => {
        if (phase === 'load-start') hdrLog?.begin(at);
        hooks.onPhase(phase, at);
      },
      onInterval: (p) => {
        hdrLog?.append(p);
        total += p.requests;
        hooks.onProgress({
          second: p.second,
          requests: p.requests,
          errors: p.errors,
          bytesRead: p.bytesRead,
          p50: p.p50,
          p99: p.p99,
          totalRequests: total,
        });
      },
    },
  );
  const result = buildResult(plan, out, setup);
  const logProblem = hdrLog?.problem();
  if (logProblem !== undefined) result.generator.warnings.push(logProblem);
  return result;
}
