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
import { outgoingWaits, type OutgoingWait } from './signals/outgoing-waits.js';
import { timerWaits, type TimerWait } from './signals/timer-waits.js';
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
  const upstream = slowestUpstream(run, s);
  const timers = upstream ? undefined : longestTimers(run, s);
  const site = upstream?.site ?? timers?.site;
  const culprit = site ? siteCulprit(site, run.cwd) : undefined;
  const perCall = upstream ? upstream.totalMs / upstream.completed : 0;
  const perRequest = upstream ? upstream.completed / s.requests : timers ? timers.created / s.requests : 0;
  const eachMs = upstream ? perCall : timers ? timers.meanDelayMs : 0;
  const sumOfLatency = s.latencyP50Ms > 0 ? (perRequest * eachMs) / s.latencyP50Ms : 0;
  const sequential = perRequest >= IO_WAIT_SEQUENTIAL_MIN_PER_REQUEST && sumOfLatency >= IO_WAIT_SEQUENTIAL_MIN_SUM && sumOfLatency <= IO_WAIT_SEQUENTIAL_MAX_SUM;
  const caller = upstream?.caller ?? timers?.caller;
  const awaitedIn = caller ? `, in ${describeCulprit(siteCulprit(caller, run.cwd))}` : '';
  const inOrder = sequential ? ` About ${round(perRequest, 1)} per request, ${round(perRequest * eachMs, 0)} ms end to end against a p50 of ${round(s.latencyP50Ms, 0)} ms: each request waits for them one after another${awaitedIn}.` : '';
  return [{
    code: 'HOTPATH_IO_WAIT',
    category: 'io-wait',
    severity: 'warning',
    title: upstream ? `Requests spend their time waiting for ${upstream.origin}` : timers ? 'Requests spend their time waiting for timers' : 'Requests spend their time waiting, not computing',
    summary: `Server latency p50 was ${round(s.latencyP50Ms, 1)} ms while the event loop was busy only ${round(busy * 100, 0)} % ` +
      `and each request used ${round(s.cpuPerRequestMs, 2)} ms of CPU: ${round(waitShare * 100, 0)} % of request time is waiting.` +
      (top ? ` Most in-flight resources are ${top.type} (${round(top.mean, 0)} on average).` : '') +
      (upstream ? ` ${upstream.api === 'fetch' ? 'fetch' : 'HTTP'} requests to ${upstream.origin}${culprit ? ` from ${describeCulprit(culprit)}` : ''} took ${round(perCall, 1)} ms each (${upstream.completed} in the window), ${round(upstream.share * 100, 0)} % of the time requests were in flight.` : '') +
      (timers ? ` setTimeout timers${culprit ? ` created in ${describeCulprit(culprit)}` : ''} ran out ${timers.fired} times in the window, ${round(timers.meanDelayMs, 1)} ms each: ${round(timers.share * 100, 0)} % of the time requests were in flight.` : '') +
      inOrder,
    evidence: {
      latencyP50Ms: round(s.latencyP50Ms, 2), latencyP99Ms: round(s.latencyP99Ms, 2), eluMean: round(s.eluMean, 3), coresMean: round(s.coresMean, 3),
      cpuPerRequestMs: round(s.cpuPerRequestMs, 3), waitShare: round(waitShare, 3), inFlightMean: round(s.inFlightMean, 1),
      ...(awaited.length > 0 ? { awaiting: awaited.map((a) => ({ type: a.type, mean: round(a.mean, 1) })) } : {}),
      ...(upstream ? { upstream: { api: upstream.api, origin: upstream.origin, calls: upstream.completed, perCallMs: round(perCall, 2), shareOfRequestTime: round(upstream.share, 3) } } : {}),
      ...(timers ? { timers: { created: timers.created, fired: timers.fired, meanDelayMs: round(timers.meanDelayMs, 2), shareOfRequestTime: round(timers.share, 3) } } : {}),
      ...(sequential ? { waitsPerRequest: round(perRequest, 2), sequential: true, ...(caller ? { awaitedIn: siteCulprit(caller, run.cwd) } : {}) } : {}),
    },
    ...(culprit ? { culprit } : {}),
    recommendation: ioWaitAdvice(timers ? 'Timeout' : top?.type, sequential),
    impact: waitShare * (1 - busy),
  }];
}

/** Resource types present beyond the inbound connections, most numerous first. */
function awaitedResources(s: LoopStats): { type: string; mean: number }[] {
  return WAIT_RESOURCES.map((type) => {
    const raw = s.resources[type] ?? 0;
    const mean = type === 'TCPSocketWrap' ? raw - s.openConnectionsMean : raw;
    return { type, mean };
  }).filter((r) => r.mean >= 1).sort((a, b) => b.mean - a.mean);
}

/** The outgoing call site whose waits explain most of the request time, if it explains enough. */
function slowestUpstream(run: RunData, s: LoopStats): (OutgoingWait & { share: number }) | undefined {
  const w = loadWindow(run);
  const thread = busiestThread(run, w);
  const top = thread ? outgoingWaits(thread, w)[0] : undefined;
  return top ? explaining(top, top.totalMs, s) : undefined;
}

/** The timer site whose timeouts explain most of the request time, if it explains enough. */
function longestTimers(run: RunData, s: LoopStats): (TimerWait & { share: number }) | undefined {
  const w = loadWindow(run);
  const thread = busiestThread(run, w);
  const top = thread ? timerWaits(thread, w)[0] : undefined;
  return top ? explaining(top, top.waitedMs, s) : undefined;
}

/** `wait` with its share of the time requests were in flight (Little's law), when that share is enough. */
function explaining<T>(wait: T, waitedMs: number, s: LoopStats): (T & { share: number }) | undefined {
  const requestTimeMs = s.inFlightMean > 0 ? s.inFlightMean * s.durationMs : s.requests * s.latencyP50Ms;
  if (requestTimeMs <= 0) return undefined;
  const share = Math.min(1, waitedMs / requestTimeMs);
  return share >= IO_WAIT_CULPRIT_MIN_SHARE ? { ...wait, share } : undefined;
}
