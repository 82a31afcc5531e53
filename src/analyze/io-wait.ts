// I/O wait: requests take long while the event loop is mostly idle, so the time is spent
// waiting (a downstream service, a pool, the thread pool, timers), not computing. What is
// awaited is named when the active resources show it, and the code awaiting it when the
// agent's hooks saw the outgoing calls or the timers that take the time; several per request
// whose times add up to the latency are waited for one after another. Requests can also queue
// for a few slots (a pool, a lock): node:http calls that wait for a socket of their http.Agent,
// or a call site or timer site held at a few waits in flight while many more requests are.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { loopStats, type LoopStats } from './signals/loop-stats.js';
import { round } from './signals/stats.js';
import { busiestThread, loadWindow } from './signals/load-window.js';
import { concurrencyBand, outgoingWaits, type OutgoingWait } from './signals/outgoing-waits.js';
import { timerWaits } from './signals/timer-waits.js';
import type { CallSite } from '../agent/protocol.js';
import { describeCulprit, siteCulprit } from './signals/culprit.js';
import { ioWaitAdvice } from './io-wait.advice.js';
import { offLoopCores } from './off-loop-cpu.js';
import { slotWait, type SlotWait } from './signals/slot-wait.js';
import { heldSlot, type HeldSlot } from './signals/held-slot.js';
import { awaitLoopIn, loopAtSite } from './signals/loop-cause.js';
import { protocolOf, socketWaits } from './signals/socket-waits.js';
import { messageWaits } from './signals/message-waits.js';
import { minorityWaits } from './signals/minority-waits.js';

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
 * a request's latency (IO_WAIT_SEQUENTIAL_MIN_SUM to _MAX_SUM of its p50 or of its mean, see
 * meanRequestMs; the event-loop-blocking analyzer compares with the p50). Run together, their sum
 * would be several times the latency, which is then the longest of them.
 */
export const IO_WAIT_SEQUENTIAL_MIN_PER_REQUEST = 1.5;
export const IO_WAIT_SEQUENTIAL_MIN_SUM = 0.7;
export const IO_WAIT_SEQUENTIAL_MAX_SUM = 1.3;
/**
 * For commands on a client socket: their waits, paired with the answers by order, read up to a
 * third above the requests' time on a busy machine (24 waits in flight for 18 requests, a bias not
 * found yet); sent together, two commands already add up to about twice the latency.
 */
export const IO_WAIT_SEQUENTIAL_MAX_SUM_COMMANDS = 1.6;
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
/**
 * An outgoing call site is pinned when at least one of its calls was in flight for this share
 * of the time, and over that busy time the number in flight was steady (10th to 90th percentile
 * within IO_WAIT_QUEUE_MAX_SPREAD): a lock holds one call, a pool of 4 holds 4. Calls that come
 * and go with the requests vary like any arrival process (about one in flight on average is idle
 * a third of the time, and a busier site spreads over several levels).
 */
export const IO_WAIT_QUEUE_MIN_BUSY = 0.8;
/**
 * node:http calls queue in their http.Agent when every socket under its `maxSockets` is busy:
 * the agent is the limit when at least this share of the calls' time went to waiting for a socket.
 */
export const IO_WAIT_POOL_MIN_QUEUED_SHARE = 0.5;
/**
 * A loop busy at least this share of the time (its profile's utilization) hardly ever waited:
 * whatever a request awaits, its callback then queues behind the other requests' work, so the
 * time a call seems to take includes the loop's own queue (on a busy machine, mostly the CPU the
 * loop did not get).
 */
export const IO_WAIT_SATURATED_ELU = 0.9;
/**
 * On such a loop, a wait no longer than this many of the loop's rounds (the wall time it takes
 * to run the work of every request in flight, see loopRoundMs) is that queue, not the I/O: a
 * healthy Hono route calling a local service with fetch once per request read 35.5 ms per call
 * against a round of 30 ms, at ELU 0.96 with the target on the CPU 22 % of its active time (load
 * average 16; the service answers at once).
 */
export const IO_WAIT_LOOP_ROUND_FACTOR = 1.5;
/** Resource types that hold a request waiting (inbound sockets and the server itself excluded). */
const WAIT_RESOURCES = [
  'Timeout',
  'TCPSocketWrap',
  'FSReqCallback',
  'FSReqPromise',
  'GetAddrInfoReqWrap',
  'PipeWrap',
  'ProcessWrap',
  'ZlibWrap',
];

export function ioWait(run: RunData): Finding[] {
  const s = loopStats(run);
  if (!s || s.requests === 0) return [];
  // On a starved machine ELU counts time spent waiting for a core as busy: the CPU the
  // process actually used is the better measure of how busy the loop was.
  const busy = Math.min(s.eluMean, s.coresMean);
  if (busy > IO_WAIT_MAX_ELU) return [];
  // Most requests quick: only waits a minority of slow requests make in turn can be the finding
  // (a route hit by one request in a few, judged once the wait source is known).
  const fewWait = s.latencyP50Ms < IO_WAIT_MIN_LATENCY_MS;
  const slowMs = fewWait ? s.latencyP99Ms : s.latencyP50Ms;
  if (slowMs < IO_WAIT_MIN_LATENCY_MS) return [];
  const waitShare = Math.max(0, 1 - s.cpuPerRequestMs / slowMs);
  if (waitShare < IO_WAIT_MIN_WAIT_SHARE) return [];
  // Requests queued for CPU work on the thread pool or new workers are not waiting on I/O.
  if (offLoopCores(run)) return [];
  const awaited = awaitedResources(s);
  const top = awaited[0];
  const source = waitSource(run, s);
  const minority =
    fewWait && source && !source.queue && !source.pool && source.share !== undefined
      ? minorityWaits(
          { p50Ms: s.latencyP50Ms, p99Ms: s.latencyP99Ms },
          { perRequest: source.perRequest, eachMs: source.eachMs, share: source.share },
          {
            minPerRequest: IO_WAIT_SEQUENTIAL_MIN_PER_REQUEST,
            minSum: IO_WAIT_SEQUENTIAL_MIN_SUM,
            minLatencyMs: IO_WAIT_MIN_LATENCY_MS,
            minShare: IO_WAIT_CULPRIT_MIN_SHARE,
          },
        )
      : undefined;
  if (fewWait && !minority) return [];
  const queued = source?.queue;
  // Requests queued for a slot wait where they await it, not in the I/O the slot's holder does.
  const ioCulprit = source?.site ? siteCulprit(source.site, run.cwd) : undefined;
  const slotCulprit = queued?.waitsAt ? siteCulprit(queued.waitsAt.site, run.cwd) : ioCulprit;
  const queuedIn = queued && source?.caller ? siteCulprit(source.caller, run.cwd) : undefined;
  // The frames further up name the lock's or the pool's wrapper when the app wrote one.
  const queuedThrough = queuedIn
    ? (source?.through ?? [])
        .slice(0, 2)
        .map((f) => `, called from ${describeCulprit(siteCulprit(f, run.cwd))}`)
        .join('')
    : '';
  const sequential =
    source !== undefined &&
    !source.queue &&
    !source.pool &&
    (minority !== undefined ||
      requestWaitsInSequence(
        s,
        source.perRequest,
        source.eachMs,
        source.commands === true ? IO_WAIT_SEQUENTIAL_MAX_SUM_COMMANDS : undefined,
      ));
  const awaitedIn = sequential && source.caller ? siteCulprit(source.caller, run.cwd) : undefined;
  // Awaited once per item in a loop: the loop serialises the waits, and is what to change.
  // The loop may sit further up, behind helpers (a repository method awaiting a query wrapper per row).
  const looping =
    sequential && source.caller
      ? loopAbove([source.caller, ...(source.through ?? []).slice(0, IO_WAIT_LOOP_MAX_DEPTH - 1)], run)
      : undefined;
  const loop = looping ? { ...siteCulprit(looping.site, run.cwd), line: looping.line } : undefined;
  if (loop) delete loop.column;
  const where =
    sequential && loop
      ? `, awaited once per item by the loop at ${loop.file}:${loop.line} in ${loop.function}${looping && looping.site.line !== loop.line ? ` (the call on line ${looping.site.line})` : ''}`
      : awaitedIn
        ? `, in ${describeCulprit(awaitedIn)}`
        : '';
  const inOrder = !sequential
    ? ''
    : minority
      ? ` About ${round(source.perRequest, 1)} per request over all requests, made by the slow ones only (the median request, ${round(s.latencyP50Ms, 2)} ms, ` +
        `was quicker than one of them): at least ${round(minority.perWaitingRequest, 1)} in each, ${round(minority.waitingRequestMs, 0)} ms end to end against a p99 of ${round(s.latencyP99Ms, 0)} ms: ` +
        `those requests wait for them one after another${where}.`
      : ` About ${round(source.perRequest, 1)} per request, ${round(source.perRequest * source.eachMs, 0)} ms end to end against a p50 of ${round(s.latencyP50Ms, 0)} ms (${round(meanRequestMs(s), 0)} ms on average): ` +
        `each request waits for them one after another${where}.`;
  const culprit = loop ?? slotCulprit;
  // Requests that queue behind a saturated loop are waiting for it, unless they wait for a slot,
  // a socket of their agent, several calls in turn, or a call longer than the loop's round.
  if (
    s.eluMean >= IO_WAIT_SATURATED_ELU &&
    !queued &&
    !source?.pool &&
    !sequential &&
    (source ? source.eachMs : meanRequestMs(s)) <= IO_WAIT_LOOP_ROUND_FACTOR * loopRoundMs(s)
  )
    return [];

  return [
    {
      code: 'HOTPATH_IO_WAIT',
      category: 'io-wait',
      severity: 'warning',
      title: minority
        ? (source?.title ?? '').replace(/^Requests spend/, 'The slowest requests spend')
        : (source?.title ?? 'Requests spend their time waiting, not computing'),
      summary:
        (minority
          ? `Most requests were quick (server latency p50 ${round(s.latencyP50Ms, 2)} ms) but the slowest waited: p99 ${round(s.latencyP99Ms, 1)} ms ` +
            `while the event loop was busy only ${round(busy * 100, 0)} % and each request used ${round(s.cpuPerRequestMs, 2)} ms of CPU on average.`
          : `Server latency p50 was ${round(s.latencyP50Ms, 1)} ms while the event loop was busy only ${round(busy * 100, 0)} % ` +
            `and each request used ${round(s.cpuPerRequestMs, 2)} ms of CPU: ${round(waitShare * 100, 0)} % of request time is waiting.`) +
        (top ? ` Most in-flight resources are ${top.type} (${round(top.mean, 0)} on average).` : '') +
        (source ? ` ${source.sentence(ioCulprit ? describeCulprit(ioCulprit) : undefined)}` : '') +
        inOrder +
        (queuedIn && !queued?.waitsAt
          ? ` They are made from ${describeCulprit(queuedIn)}${queuedThrough}: the limit is on the way there.`
          : '') +
        (queued?.waitsAt && slotCulprit
          ? ` Requests wait for a slot at \`${queued.waitsAt.callback ? '' : 'await '}${queued.waitsAt.awaited}\` in ${describeCulprit(slotCulprit)}: ` +
            `about ${round(Math.max(0, s.inFlightMean - queued.slots), 1)} waiting on average for ${queued.slots} slot${queued.slots === 1 ? '' : 's'}.`
          : ''),
      evidence: {
        latencyP50Ms: round(s.latencyP50Ms, 2),
        latencyP99Ms: round(s.latencyP99Ms, 2),
        eluMean: round(s.eluMean, 3),
        coresMean: round(s.coresMean, 3),
        cpuPerRequestMs: round(s.cpuPerRequestMs, 3),
        waitShare: round(waitShare, 3),
        inFlightMean: round(s.inFlightMean, 1),
        ...(awaited.length > 0 ? { awaiting: awaited.map((a) => ({ type: a.type, mean: round(a.mean, 1) })) } : {}),
        ...source?.evidence,
        ...(queued
          ? {
              queuedBehind: round(queued.inFlight, 1),
              queueRatio: round(s.inFlightMean / queued.inFlight, 1),
              poolSize: queued.slots,
              waitingForSlot: round(Math.max(0, s.inFlightMean - queued.slots), 1),
              ...(queued.waitsAt
                ? { waitsAt: { ...siteCulprit(queued.waitsAt.site, run.cwd), awaited: queued.waitsAt.awaited }, slotHeldBy: ioCulprit }
                : {}),
            }
          : {}),
        ...(source?.pool
          ? { queuedBehind: source.pool.maxSockets ?? round(source.pool.onSocket, 1), maxSockets: source.pool.maxSockets }
          : {}),
        ...(sequential
          ? {
              waitsPerRequest: round(source.perRequest, 2),
              sequential: true,
              ...(minority
                ? {
                    slowMinority: {
                      waitsPerWaitingRequestAtLeast: round(minority.perWaitingRequest, 2),
                      waitingRequestMs: round(minority.waitingRequestMs, 1),
                    },
                  }
                : {}),
              ...(awaitedIn ? { awaitedIn } : {}),
              ...(loop && looping ? { serialisedBy: loop, perItemCall: siteCulprit(looping.site, run.cwd), waitsIn: ioCulprit } : {}),
            }
          : {}),
      },
      ...(culprit ? { culprit } : {}),
      recommendation: ioWaitAdvice(
        source?.resource ?? top?.type,
        sequential,
        queued !== undefined,
        source?.pool !== undefined,
        source?.commands === true,
      ),
      impact: waitShare * (1 - busy),
    },
  ];
}

/** How many app functions up from the wait a loop that serialises it is looked for (the caller, then its callers). */
export const IO_WAIT_LOOP_MAX_DEPTH = 3;

/** The first of `sites` (nearest first) whose call sits in a loop of its function, with the loop's line. */
function loopAbove(sites: readonly CallSite[], run: RunData): { site: CallSite; line: number } | undefined {
  for (const site of sites) {
    const line = loopAtSite(run, site);
    if (line !== undefined) return { site, line };
  }
  // Else a loop awaiting per item in the nearest of them (the stack kept may be another call's).
  for (const site of sites) {
    const line = awaitLoopIn(run, site);
    if (line !== undefined) return { site, line };
  }
  return undefined;
}

/**
 * The wall time the loop takes to run once the work of every request in flight: their CPU
 * (requests in flight × CPU per request) stretched by the share of its active time the loop got a
 * core (cpuPerActive, 1 on a free core). A callback that becomes ready waits about this long
 * behind a saturated loop.
 */
export function loopRoundMs(s: LoopStats): number {
  const onCpu = Math.min(1, Math.max(s.cpuPerActive, 0.01));
  return (s.inFlightMean * s.cpuPerRequestMs) / onCpu;
}

/**
 * The mean time a request spent in the server (Little's law: requests in flight on average × the
 * window, over the requests), else the latency p50. Waits are counted by their mean, so they may add
 * up to the mean rather than the p50: on a busy machine a long tail puts the mean well above the p50.
 */
function meanRequestMs(s: LoopStats): number {
  return s.inFlightMean > 0 && s.requests > 0 && s.durationMs > 0 ? (s.inFlightMean * s.durationMs) / s.requests : s.latencyP50Ms;
}

/**
 * The requests' waits add up to about their latency p50 or their mean (a p50 below the mean when
 * a tail of slow requests drags it): each request waits for them one after another. The one rule
 * io-wait and the blocking finding's HTTP client calls both judge by.
 */
export function requestWaitsInSequence(s: LoopStats, perRequest: number, eachMs: number, maxSum?: number): boolean {
  return [s.latencyP50Ms, meanRequestMs(s)].some((ms) => waitsInSequence(perRequest, eachMs, ms, maxSum));
}

/** Several waits per request whose times add up to about a request's latency (its mean): each request waits for them one after another. */
export function waitsInSequence(perRequest: number, eachMs: number, latencyMs: number, maxSum = IO_WAIT_SEQUENTIAL_MAX_SUM): boolean {
  const sum = latencyMs > 0 ? (perRequest * eachMs) / latencyMs : 0;
  return perRequest >= IO_WAIT_SEQUENTIAL_MIN_PER_REQUEST && sum >= IO_WAIT_SEQUENTIAL_MIN_SUM && sum <= maxSum;
}

/** What the agent's hooks saw the requests wait for, when it explains most of their time. */
interface WaitSource {
  title: string;
  /** The app code that made the calls or timers, and the app function that called it. */
  site?: CallSite;
  caller?: CallSite;
  /** The app functions further up the stack that led to `caller`, nearest first. */
  through?: CallSite[];
  perRequest: number;
  /** Time of one call or timer, ms. */
  eachMs: number;
  /** The share of the time requests were in flight these waits add up to. */
  share?: number;
  /** The active-resource type these waits hold. */
  resource: string;
  /**
   * Set when the requests queue for these waits rather than spend their time in them: the waits in
   * flight, the slots that implies (the steady count), and where the requests await a slot when the
   * source shows it.
   */
  queue?: { inFlight: number; slots: number; waitsAt?: SlotWait };
  /** Set when node:http calls queue for the sockets of their http.Agent: its limit and the calls on a socket at a time. */
  pool?: { maxSockets?: number; onSocket: number };
  /** Whether the waits held a steady few slots over the window (see pinned and siteSteady). */
  steady: boolean;
  /** Set when the waits are commands on a client socket of the app's (a database or cache driver). */
  commands?: boolean;
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
  // HTTP and fetch calls, commands on the app's own client sockets (database and cache drivers), messages to a child process or a worker.
  const calls = [...outgoingWaits(thread, w), ...socketWaits(thread, w), ...messageWaits(thread, w)].sort((a, b) => b.totalMs - a.totalMs);
  const call = calls[0];
  const timer = timerWaits(thread, w)[0];
  const candidates: { waitedMs: number; make: (share: number) => WaitSource; slots: () => number | undefined }[] = [];
  if (call)
    candidates.push({
      waitedMs: call.totalMs,
      make: (share) => upstreamSource(call, share, s),
      slots: () => concurrencyBand(call.concurrencyMs)?.p90,
    });
  if (timer) {
    candidates.push({
      waitedMs: timer.waitedMs,
      slots: () => pinnedCount(s, 'Timeout'),
      make: (share) => ({
        title: 'Requests spend their time waiting for timers',
        site: timer.site,
        caller: timer.caller,
        ...(timer.through ? { through: timer.through } : {}),
        perRequest: timer.created / s.requests,
        eachMs: timer.meanDelayMs,
        share,
        resource: 'Timeout',
        steady: pinned(s, 'Timeout'),
        sentence: (c) =>
          `setTimeout timers${c ? ` created in ${c}` : ''} ran out ${timer.fired} times in the window, ${round(timer.meanDelayMs, 1)} ms each: ${round(share * 100, 0)} % of the time requests were in flight.`,
        evidence: {
          timers: {
            created: timer.created,
            fired: timer.fired,
            meanDelayMs: round(timer.meanDelayMs, 2),
            shareOfRequestTime: round(share, 3),
          },
        },
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
    if (
      source.perRequest < IO_WAIT_QUEUE_MIN_PER_REQUEST ||
      inFlight <= 0 ||
      s.inFlightMean < IO_WAIT_QUEUE_RATIO * inFlight ||
      s.latencyP50Ms < IO_WAIT_QUEUE_RATIO * source.eachMs ||
      !source.steady
    )
      continue;
    return queuedFor(source, inFlight, s, c.slots(), slotWait(run, [source.site, source.caller, ...(source.through ?? [])]));
  }
  const held = heldSlot(run, calls, s, { ratio: IO_WAIT_QUEUE_RATIO, minPerRequest: IO_WAIT_QUEUE_MIN_PER_REQUEST });
  return held ? heldSlotSource(held, s) : undefined;
}

/** Requests queued for a slot that its holder keeps across several waits in turn (see held-slot.ts). */
function heldSlotSource(held: HeldSlot, s: LoopStats): WaitSource {
  const waits = held.members.map((c) => {
    const what =
      c.api === 'socket'
        ? `commands to ${c.origin}`
        : c.api === 'ipc'
          ? `messages to the ${c.origin}`
          : `${c.api === 'fetch' ? 'fetch' : 'HTTP'} calls to ${c.origin}`;
    return `${what} (${round(c.completed / s.requests, 1)} per request, ${round(c.totalMs / c.completed, 1)} ms each)`;
  });
  return {
    title: `Requests queue for a slot of a limited resource (${held.slots === 1 ? 'one at a time' : `about ${held.slots} at a time`}), not for the I/O`,
    site: held.holder,
    perRequest: 1,
    eachMs: held.perRequestMs,
    resource: held.members[0].api === 'ipc' ? 'IPC' : 'TCPSocketWrap',
    steady: false,
    queue: { inFlight: held.inFlight, slots: held.slots, waitsAt: held.waitsAt },
    sentence: (c) =>
      `${c ?? 'One function'} holds its slot across several waits in turn: ${waits.join(', ')}, ` +
      `${round(held.perRequestMs, 1)} ms per request in all. Never more than ${held.slots} of any of them were in flight, ` +
      `${round(held.inFlight, 1)} together on average, while ${round(s.inFlightMean, 1)} requests were: most requests wait for a turn before they get to them, ` +
      `as behind a pool or a lock of about ${held.slots}.`,
    evidence: {
      heldAcross: held.members.map((c) => ({
        api: c.api,
        origin: c.origin,
        callsPerRequest: round(c.completed / s.requests, 2),
        perCallMs: round(c.totalMs / c.completed, 2),
      })),
    },
  };
}

/**
 * The slowest call site as the requests' wait. node:http's time is split into the wait for a
 * socket and the time on it: when the calls spent most of it queued in their http.Agent, the
 * agent's socket limit, not the upstream, sets the latency.
 */
function upstreamSource(call: OutgoingWait, share: number, s: LoopStats): WaitSource {
  const perCall = call.totalMs / call.completed;
  const split =
    call.socketWaitMs !== undefined
      ? { queuedMs: call.socketWaitMs / call.completed, onSocketMs: (call.totalMs - call.socketWaitMs) / call.completed }
      : undefined;
  // Told only when the calls explain the requests' time: the agent's queue is then their wait.
  const pooled =
    split !== undefined &&
    share >= IO_WAIT_CULPRIT_MIN_SHARE &&
    (call.queued ?? 0) > 0 &&
    call.socketWaitMs! >= IO_WAIT_POOL_MIN_QUEUED_SHARE * call.totalMs;
  const band = concurrencyBand(call.concurrencyMs);
  if (call.api === 'socket') return commandSource(call, share, s, band);
  if (call.api === 'ipc') return messageSource(call, share, s, band);
  const kind = call.api === 'fetch' ? 'fetch' : 'HTTP';
  const base = (c: string | undefined) =>
    `${kind} requests to ${call.origin}${c ? ` from ${c}` : ''} took ${round(perCall, 1)} ms each (${call.completed} in the window), ${round(share * 100, 0)} % of the time requests were in flight.`;
  const evidence = {
    upstream: {
      api: call.api,
      origin: call.origin,
      calls: call.completed,
      perCallMs: round(perCall, 2),
      shareOfRequestTime: round(share, 3),
      ...(split ? { queuedMs: round(split.queuedMs, 2), onSocketMs: round(split.onSocketMs, 2), queuedCalls: call.queued ?? 0 } : {}),
      ...(call.maxSockets !== undefined ? { maxSockets: call.maxSockets } : {}),
    },
  };
  const source: WaitSource = {
    title: `Requests spend their time waiting for ${call.origin}`,
    site: call.site,
    caller: call.caller,
    ...(call.through ? { through: call.through } : {}),
    perRequest: call.completed / s.requests,
    eachMs: perCall,
    share,
    resource: 'TCPSocketWrap',
    steady: siteSteady(band),
    sentence: base,
    evidence,
  };
  if (!pooled || !split) return source;
  const onSocket = s.durationMs > 0 ? (call.totalMs - call.socketWaitMs!) / s.durationMs : 0;
  const sockets = call.maxSockets !== undefined ? `the ${call.maxSockets} socket${call.maxSockets === 1 ? '' : 's'}` : 'the sockets';
  return {
    ...source,
    title: `Requests queue for ${sockets} of the http.Agent that calls ${call.origin}`,
    pool: { ...(call.maxSockets !== undefined ? { maxSockets: call.maxSockets } : {}), onSocket },
    sentence: (c) =>
      `${base(c)} ${round((call.queued! / Math.max(call.started, call.queued!)) * 100, 0)} % of them found every socket of their ` +
      `http.Agent busy${call.maxSockets !== undefined ? ` (maxSockets ${call.maxSockets})` : ''} and waited in its queue: ${round(split.queuedMs, 1)} ms a call waiting for a socket, ` +
      `${round(split.onSocketMs, 1)} ms on it until the answer. The upstream answers in about ${round(split.onSocketMs, 0)} ms; ` +
      `the wait for a socket is the rest, with ${round(onSocket, 1)} calls on a socket at a time while ${round(s.inFlightMean, 1)} requests were in flight.`,
  };
}

/**
 * Commands written on a client socket of the app's (a database or cache driver on a long-lived
 * connection), each waiting from the write to its answer.
 */
function commandSource(call: OutgoingWait, share: number, s: LoopStats, band: ReturnType<typeof concurrencyBand>): WaitSource {
  const perCall = call.totalMs / call.completed;
  const protocol = protocolOf(call.origin);
  const remote = protocol ? `${protocol} at ${call.origin}` : call.origin;
  const perRequest = call.completed / s.requests;
  return {
    title: `Requests spend their time waiting for ${remote}`,
    site: call.site,
    caller: call.caller,
    ...(call.through ? { through: call.through } : {}),
    perRequest,
    eachMs: perCall,
    share,
    resource: 'TCPSocketWrap',
    steady: siteSteady(band),
    commands: true,
    sentence: (c) =>
      `Commands written on the connection to ${remote}${c ? ` from ${c}` : ''} waited ${round(perCall, 1)} ms each for their answer ` +
      `(${call.completed} in the window, ${round(perRequest, 1)} per request), ${round(share * 100, 0)} % of the time requests were in flight.`,
    evidence: {
      upstream: {
        api: call.api,
        origin: call.origin,
        ...(protocol ? { protocol } : {}),
        calls: call.completed,
        callsPerRequest: round(perRequest, 2),
        perCallMs: round(perCall, 2),
        shareOfRequestTime: round(share, 3),
      },
    },
  };
}

/**
 * Messages sent to a child process over IPC or to a worker thread, each waiting from the send to
 * the message that answered it: a round trip to another process or thread.
 */
function messageSource(call: OutgoingWait, share: number, s: LoopStats, band: ReturnType<typeof concurrencyBand>): WaitSource {
  const perCall = call.totalMs / call.completed;
  const perRequest = call.completed / s.requests;
  const how = call.origin.startsWith('worker') ? 'posted to' : 'sent over IPC to';
  return {
    title: `Requests spend their time waiting for answers from a ${call.origin}`,
    site: call.site,
    caller: call.caller,
    ...(call.through ? { through: call.through } : {}),
    perRequest,
    eachMs: perCall,
    share,
    resource: 'IPC',
    steady: siteSteady(band),
    sentence: (c) =>
      `Messages ${how} the ${call.origin}${c ? ` from ${c}` : ''} waited ${round(perCall, 1)} ms each for an answer ` +
      `(${call.completed} in the window, ${round(perRequest, 1)} per request), ${round(share * 100, 0)} % of the time requests were in flight.`,
    evidence: {
      upstream: {
        api: call.api,
        origin: call.origin,
        calls: call.completed,
        callsPerRequest: round(perRequest, 2),
        perCallMs: round(perCall, 2),
        shareOfRequestTime: round(share, 3),
      },
    },
  };
}

/** A call site held at a steady few calls in flight, busy nearly all the time: its calls are capped. */
function siteSteady(band: ReturnType<typeof concurrencyBand>): boolean {
  return band !== undefined && band.busyShare >= IO_WAIT_QUEUE_MIN_BUSY && band.p90 - band.p10 <= IO_WAIT_QUEUE_MAX_SPREAD;
}

/**
 * The resource type was held in every sample, in a steady number: the waits are capped. (Not for
 * sockets: inbound connections and the idle ones of a keep-alive pool share their count, so call
 * sites are judged by their own calls in flight, siteSteady.)
 */
function pinned(s: LoopStats, type: string): boolean {
  const band = s.resourceBands[type];
  return band !== undefined && band.p10 >= 1 && band.p90 - band.p10 <= IO_WAIT_QUEUE_MAX_SPREAD;
}

/** The steady count of a pinned resource beyond what the process held at rest (its 90th percentile). */
function pinnedCount(s: LoopStats, type: string): number | undefined {
  const band = s.resourceBands[type];
  return band ? band.p90 - (s.resourcesAtRest[type] ?? 0) : undefined;
}

/**
 * The same waits told as the few slots the requests queue for: as many slots as the waits' steady
 * count (their 90th percentile; the mean in flight reads low, as a slot stays held a little longer
 * than the timed wait), else the mean in flight.
 */
function queuedFor(
  source: WaitSource,
  inFlight: number,
  s: LoopStats,
  steadyCount: number | undefined,
  waitsAt: SlotWait | undefined,
): WaitSource {
  const slots = Math.max(
    1,
    steadyCount !== undefined && steadyCount >= 1 && steadyCount < s.inFlightMean ? Math.round(steadyCount) : Math.round(inFlight),
  );
  return {
    ...source,
    title: waitsAt
      ? `Requests queue for a slot of a limited resource (${slots === 1 ? 'one at a time' : `about ${slots} at a time`}), not for the I/O`
      : 'Requests queue for a limited resource (a pool, a lock or a concurrency limit)',
    queue: { inFlight, slots, ...(waitsAt ? { waitsAt } : {}) },
    sentence: (c) =>
      `${source.sentence(c)} Only ${round(inFlight, 1)} of them were in flight at a time on average, while ` +
      `${round(s.inFlightMean, 1)} requests were: most requests wait for a turn before they get to them, ` +
      (slots <= 1 ? 'one at a time, as behind a lock or a single connection.' : `as behind a pool or a lock of about ${slots}.`),
  };
}

/** The share of the time requests were in flight (Little's law: in-flight mean × window) that `waitedMs` is. */
function requestTimeShare(waitedMs: number, s: LoopStats): number {
  const requestTimeMs = s.inFlightMean > 0 ? s.inFlightMean * s.durationMs : s.requests * s.latencyP50Ms;
  return requestTimeMs > 0 ? Math.min(1, waitedMs / requestTimeMs) : 0;
}

/**
 * Resource types present beyond the inbound connections, most numerous first. Handles the
 * process already held at rest, before the load (a child's stdio and IPC pipes, its process
 * handle, an interval), are its own plumbing, no sign of a wait: only what the load added counts.
 * Sockets are the exception: a pool opened at startup holds the connections requests wait on.
 */
function awaitedResources(s: LoopStats): { type: string; mean: number }[] {
  return WAIT_RESOURCES.map((type) => {
    const raw = s.resources[type] ?? 0;
    const mean = raw - (type === 'TCPSocketWrap' ? s.openConnectionsMean : (s.resourcesAtRest[type] ?? 0));
    return { type, mean };
  })
    .filter((r) => r.mean >= 1)
    .sort((a, b) => b.mean - a.mean);
}
