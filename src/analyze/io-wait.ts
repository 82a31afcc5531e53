// I/O wait: requests take long while the event loop is mostly idle, so the time is spent
// waiting (a downstream service, a pool, the thread pool, timers), not computing. What is
// awaited is named when the active resources show it, and the code awaiting it when the
// agent's hooks saw the outgoing calls or the timers that take the time; several per request
// whose times add up to the latency are waited for one after another.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { loopStats, type LoopStats } from './signals/loop-stats.js';
import { round } from './signals/stats.js';
import { busiestThread, loadWindow } from './signals/load-window.js';
import { outgoingWaits } from './signals/outgoing-waits.js';
import { timerWaits } from './signals/timer-waits.js';
import type { CallSite } from '../agent/protocol.js';
import { describeCulprit, siteCulprit } from './signals/culprit.js';
import { ioWaitAdvice } from './io-wait.advice.js';
import { offLoopCores } from './off-loop-cpu.js';

/** The loop must be mostly idle: above this utilization, CPU explains latency. */
export const IO_WAIT_MAX_ELU = 0.5;
/** Server-side latency p50 worth a finding (ms): beyond what any local work explains. */
export const IO_WAIT_MIN_LATENCY_MS = 20;
/** Share of request time not spent on CPU for it to be called waiting. */
export const IO_WAIT_MIN_WAIT_SHARE = 0.8;
/**
 * An outgoing call site is named the culprit when the time its requests waited for their
 * responses is at least this share of all the time requests were in flight (Little's law:
 * in-flight mean × window): it then explains most of what the clients waited for.
 */
export const IO_WAIT_CULPRIT_MIN_SHARE = 0.5;
/**
 * Waits that run one after another: at least this many per request whose times add up to about
 * the latency p50 (IO_WAIT_SEQUENTIAL_MIN_SUM to _MAX_SUM of it). Run together, their sum would
 * be several times the latency, which is then the longest of them.
 */
export const IO_WAIT_SEQUENTIAL_MIN_PER_REQUEST = 1.5;
export const IO_WAIT_SEQUENTIAL_MIN_SUM = 0.7;
export const IO_WAIT_SEQUENTIAL_MAX_SUM = 1.3;
/**
 * Requests queue in front of a few waits (a pool of 2 connections, a lock, a concurrency
 * limit) when at least this many are in flight per wait of the site that makes them (its
 * waits in flight, by Little's law: time waited / window). The site must make about one wait per
 * request (at least IO_WAIT_QUEUE_MIN_PER_REQUEST): a timer re-armed once a second is no
 * request's turn.
 */
export const IO_WAIT_QUEUE_RATIO = 3;
/**
 * ...and their resources must be pinned: busy in every sample, the count steady within this
 * (90th minus 10th percentile over the samples). A pool of 2 always holds 2; unrelated quick
 * calls come and go (their count varies like any arrival process).
 */
export const IO_WAIT_QUEUE_MAX_SPREAD = 1;
export const IO_WAIT_QUEUE_MIN_PER_REQUEST = 0.5;
/** Resource types that hold a request waiting (inbound sockets and the server itself excluded). */
const WAIT_RESOURCES = ['Timeout', 'TCPSocketWrap', 'FSReqCallback', 'FSReqPromise', 'GetAddrInfoReqWrap', 'PipeWrap', 'ProcessWrap', 'ZlibWrap'];

export function ioWait(run: RunData): Finding[] {
  const s = loopStats(run);
  if (!s || s.requests === 0) return [];
  // On a starved machine ELU counts time spent waiting for a core as busy: the CPU the
  // process actually used is the better measure of how busy the loop was.
  const busy = Math.min(s.eluMean, s.coresMean);
  if (busy > IO_WAIT_MAX_ELU || s.latencyP50Ms < IO_WAIT_MIN_LATENCY_MS) return [];
  const waitShare = Math.max(0, 1 - s.cpuPerRequestMs / s.latencyP50Ms);
  if (waitShare < IO_WAIT_MIN_WAIT_SHARE) return [];
  // Requests queued for CPU work on the thread pool or new workers are not waiting on I/O.
  if (offLoopCores(run)) return [];
  const awaited = awaitedResources(s);
  const top = awaited[0];
  const source = waitSource(run, s);
  const culprit = source?.site ? siteCulprit(source.site, run.cwd) : undefined;
  const queued = source?.queue;
  const queuedIn = queued && source?.caller ? siteCulprit(source.caller, run.cwd) : undefined;
  const sum = source && s.latencyP50Ms > 0 ? (source.perRequest * source.eachMs) / s.latencyP50Ms : 0;
  const sequential = source !== undefined && !source.queue && source.perRequest >= IO_WAIT_SEQUENTIAL_MIN_PER_REQUEST &&
    sum >= IO_WAIT_SEQUENTIAL_MIN_SUM && sum <= IO_WAIT_SEQUENTIAL_MAX_SUM;
  const awaitedIn = sequential && source.caller ? siteCulprit(source.caller, run.cwd) : undefined;
  const inOrder = sequential
    ? ` About ${round(source.perRequest, 1)} per request, ${round(source.perRequest * source.eachMs, 0)} ms end to end against a p50 of ${round(s.latencyP50Ms, 0)} ms: ` +
      `each request waits for them one after another${awaitedIn ? `, in ${describeCulprit(awaitedIn)}` : ''}.`
    : '';
  return [{
    code: 'HOTPATH_IO_WAIT',
    category: 'io-wait',
    severity: 'warning',
    title: source?.title ?? 'Requests spend their time waiting, not computing',
    summary: `Server latency p50 was ${round(s.latencyP50Ms, 1)} ms while the event loop was busy only ${round(busy * 100, 0)} % ` +
      `and each request used ${round(s.cpuPerRequestMs, 2)} ms of CPU: ${round(waitShare * 100, 0)} % of request time is waiting.` +
      (top ? ` Most in-flight resources are ${top.type} (${round(top.mean, 0)} on average).` : '') +
      (source ? ` ${source.sentence(culprit ? describeCulprit(culprit) : undefined)}` : '') + inOrder +
      (queuedIn ? ` They are made from ${describeCulprit(queuedIn)}: the limit is on the way there.` : ''),
    evidence: {
      latencyP50Ms: round(s.latencyP50Ms, 2), latencyP99Ms: round(s.latencyP99Ms, 2), eluMean: round(s.eluMean, 3), coresMean: round(s.coresMean, 3),
      cpuPerRequestMs: round(s.cpuPerRequestMs, 3), waitShare: round(waitShare, 3), inFlightMean: round(s.inFlightMean, 1),
      ...(awaited.length > 0 ? { awaiting: awaited.map((a) => ({ type: a.type, mean: round(a.mean, 1) })) } : {}),
      ...source?.evidence,
      ...(queued ? { queuedBehind: round(queued.inFlight, 1), queueRatio: round(s.inFlightMean / queued.inFlight, 1) } : {}),
      ...(sequential ? { waitsPerRequest: round(source.perRequest, 2), sequential: true, ...(awaitedIn ? { awaitedIn } : {}) } : {}),
    },
    ...(culprit ? { culprit } : {}),
    recommendation: ioWaitAdvice(source?.resource ?? top?.type, sequential, queued !== undefined),
    impact: waitShare * (1 - busy),
  }];
}

/** What the agent's hooks saw the requests wait for, when it explains most of their time. */
interface WaitSource {
  title: string;
  /** The app code that made the calls or timers, and the app function that called it. */
  site?: CallSite;
  caller?: CallSite;
  perRequest: number;
  /** Time of one call or timer, ms. */
  eachMs: number;
  /** The active-resource type these waits hold. */
  resource: string;
  /** Set when the requests queue for these waits rather than spend their time in them: the waits in flight. */
  queue?: { inFlight: number };
  sentence(culprit: string | undefined): string;
  evidence: Record<string, unknown>;
}

/**
 * The slowest outgoing call site, else the longest-waited timer site, if it explains enough of
 * the time requests were in flight; else the one of them the requests queue for.
 */
function waitSource(run: RunData, s: LoopStats): WaitSource | undefined {
  const w = loadWindow(run);
  const thread = busiestThread(run, w);
  if (!thread) return undefined;
  const call = outgoingWaits(thread, w)[0];
  const timer = timerWaits(thread, w)[0];
  const candidates: { waitedMs: number; make: (share: number) => WaitSource }[] = [];
  if (call) {
    const perCall = call.totalMs / call.completed;
    candidates.push({
      waitedMs: call.totalMs,
      make: (share) => ({
        title: `Requests spend their time waiting for ${call.origin}`, site: call.site, caller: call.caller,
        perRequest: call.completed / s.requests, eachMs: perCall, resource: 'TCPSocketWrap',
        sentence: (c) => `${call.api === 'fetch' ? 'fetch' : 'HTTP'} requests to ${call.origin}${c ? ` from ${c}` : ''} took ${round(perCall, 1)} ms each (${call.completed} in the window), ${round(share * 100, 0)} % of the time requests were in flight.`,
        evidence: { upstream: { api: call.api, origin: call.origin, calls: call.completed, perCallMs: round(perCall, 2), shareOfRequestTime: round(share, 3) } },
      }),
    });
  }
  if (timer) {
    candidates.push({
      waitedMs: timer.waitedMs,
      make: (share) => ({
        title: 'Requests spend their time waiting for timers', site: timer.site, caller: timer.caller,
        perRequest: timer.created / s.requests, eachMs: timer.meanDelayMs, resource: 'Timeout',
        sentence: (c) => `setTimeout timers${c ? ` created in ${c}` : ''} ran out ${timer.fired} times in the window, ${round(timer.meanDelayMs, 1)} ms each: ${round(share * 100, 0)} % of the time requests were in flight.`,
        evidence: { timers: { created: timer.created, fired: timer.fired, meanDelayMs: round(timer.meanDelayMs, 2), shareOfRequestTime: round(share, 3) } },
      }),
    });
  }
  for (const c of candidates) {
    const share = requestTimeShare(c.waitedMs, s);
    if (share >= IO_WAIT_CULPRIT_MIN_SHARE) return c.make(share);
  }
  for (const c of candidates) {
    const source = c.make(requestTimeShare(c.waitedMs, s));
    const inFlight = s.durationMs > 0 ? c.waitedMs / s.durationMs : 0;
    if (source.perRequest < IO_WAIT_QUEUE_MIN_PER_REQUEST || inFlight <= 0 || s.inFlightMean < IO_WAIT_QUEUE_RATIO * inFlight || !pinned(s, source.resource)) continue;
    return queuedFor(source, inFlight, s);
  }
  return undefined;
}

/** The resource type was held in every sample, in a steady number: the waits are capped. */
function pinned(s: LoopStats, type: string): boolean {
  // Sockets count the inbound connections and the idle ones a keep-alive pool keeps open: their
  // number says nothing of how many calls were under way.
  if (type === 'TCPSocketWrap') return false;
  const band = s.resourceBands[type];
  return band !== undefined && band.p10 >= 1 && band.p90 - band.p10 <= IO_WAIT_QUEUE_MAX_SPREAD;
}

/** The same waits told as the few slots the requests queue for. */
function queuedFor(source: WaitSource, inFlight: number, s: LoopStats): WaitSource {
  return {
    ...source,
    title: 'Requests queue for a limited resource (a pool, a lock or a concurrency limit)',
    queue: { inFlight },
    sentence: (c) => `${source.sentence(c)} Only ${round(inFlight, 1)} of them were in flight at a time on average, while ` +
      `${round(s.inFlightMean, 1)} requests were: most requests wait for a turn before they get to them, as behind a pool or a ` +
      `lock of about ${Math.max(1, Math.round(inFlight))}.`,
  };
}

/** The share of the time requests were in flight (Little's law: in-flight mean × window) that `waitedMs` is. */
function requestTimeShare(waitedMs: number, s: LoopStats): number {
  const requestTimeMs = s.inFlightMean > 0 ? s.inFlightMean * s.durationMs : s.requests * s.latencyP50Ms;
  return requestTimeMs > 0 ? Math.min(1, waitedMs / requestTimeMs) : 0;
}

/** Resource types present beyond the inbound connections, most numerous first. */
function awaitedResources(s: LoopStats): { type: string; mean: number }[] {
  return WAIT_RESOURCES.map((type) => {
    const raw = s.resources[type] ?? 0;
    const mean = type === 'TCPSocketWrap' ? raw - s.openConnectionsMean : raw;
    return { type, mean };
  }).filter((r) => r.mean >= 1).sort((a, b) => b.mean - a.mean);
}
