// Memory leak: the heap left after garbage collection keeps rising over the run. Judged on
// the trend of the heap left after full GCs (the agent reads it after every full GC:
// signals/gc-activity.ts) against the requests served (time when none were), with slope and
// fit over the whole window, never on one sample: a heap that grows then gets collected is not
// a leak. The culprit comes from what was still alive
// after the load (signals/leak-culprit.ts). A run too short for that trend (a few full GCs, a few
// MB kept: a small leak at a modest rate) is judged on the bytes kept per request instead
// (signals/growth-per-request.ts): from the middle of the load to the GC after it, and against
// the first half, so a warm-up that flattens is not a leak.

import type { RunData, ThreadTelemetry } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { buildFinding } from './build-finding.js';
import { busiestThread, loadWindow, windowSamples, type Window } from './signals/load-window.js';
import { gcActivity, type GcActivity } from './signals/gc-activity.js';
import { leakCulprit } from './signals/leak-culprit.js';
import { requestSeries, requestsAt } from './signals/request-series.js';
import { linearFit, round, type LinearFit, extent } from './signals/stats.js';
import { latencyTrend } from './signals/latency-trend.js';
import { externalLeakAdvice, memoryLeakAdvice } from './memory-leak.advice.js';
import { heapProfileHint } from './gc-pressure.advice.js';
import {
  growthPerRequest,
  midReading,
  midSwing,
  withoutAbandoned,
  type GrowthPerRequest,
  type Reading,
} from './signals/growth-per-request.js';

/** Segments the window is cut into; the lowest post-full-GC heap of each is one point of the envelope. */
export const LEAK_SEGMENTS = 8;
/**
 * Full (mark-sweep) GCs needed in the window. Only a full GC frees the old generation: before
 * the first ones, objects promoted by scavenges make any busy heap look like it leaks.
 */
export const LEAK_MIN_MAJOR_GCS = 3;
/**
 * Growth of the envelope worth reporting, per request served: the per-request rule's floor
 * (LEAK_MIN_BYTES_PER_REQUEST, 512 B: healthy servers kept under 250 per request, a record kept
 * per request 1,000 and more). A floor per request holds at any request rate and machine speed,
 * where a floor in bytes (8 MiB before) missed a 2 KB-per-request leak served at 700 req/s for
 * 5 s and let a slow machine's short run hide any leak.
 */
export const LEAK_TREND_MIN_BYTES_PER_REQUEST = 256;
/** Requests the window must serve for the trend to be read against them (else against time). */
export const LEAK_TREND_MIN_REQUESTS = 100;
/**
 * Growth worth reporting in a window that served no requests (a target the load never reached, a
 * worker thread), bytes: with nothing to divide by, the JIT and caches warming up set the floor.
 */
export const LEAK_MIN_GROWTH_BYTES = 8 * 1024 * 1024;
/** And relative to where it started: 20 % of the baseline heap (the floor relative to the app's size). */
export const LEAK_MIN_GROWTH_RATIO = 0.2;
/** The rise must be steady: the line explains 80 % of the envelope's variance. */
export const LEAK_MIN_R2 = 0.8;
/** Doubling the heap within one run is critical. */
export const LEAK_CRITICAL_RATIO = 1;
export const LEAK_BASE_IMPACT = 0.05;

export function memoryLeak(run: RunData): Finding[] {
  const byTrend = trendLeak(run);
  // A trend (enough full GCs) leads; growth with too few of them for a trend is judged per request when it can be.
  if (byTrend.some((f) => f.code !== 'HOTPATH_HEAP_GROWTH_UNCONFIRMED')) return byTrend;
  const byRequests = perRequestLeak(run);
  return byRequests.length > 0 ? byRequests : byTrend;
}

function trendLeak(run: RunData): Finding[] {
  const w = loadWindow(run);
  const thread = busiestThread(run, w);
  if (!w || !thread) return [];
  const gc = gcActivity([thread], w);
  const offHeap = externalLeak(run, thread, w, gc.fullGcs);
  const envelope = heapEnvelope(gc.heapAfterFull, w);
  if (envelope.length < LEAK_MIN_MAJOR_GCS)
    return offHeap.length > 0 ? offHeap : unconfirmedGrowth(run, thread, w, gc.fullGcs, postLoadHeap(thread, w));
  const axis = trendAxis(thread, w);
  const { fit, growth } = trend(envelope, axis);
  // The line's start, but never below the smallest heap a full GC left up to the window's end
  // (startup included): a leaking heap does not shrink, and a line through a late first full GC
  // (or a heap growing faster than linearly) extrapolates to a start no real heap had (0.1 MB).
  const floor = extent([
    ...gcActivity([thread], null)
      .heapAfterFull.filter((p) => p.t <= w.end)
      .map((p) => p.bytes),
    ...envelope.map((p) => p.bytes),
  ]).min;
  const baseline = Math.max(1, fit.intercept, floor);
  if (
    !rises(growth, baseline, fit.r2, floorOf(axis, HEAP_FLOORS)) ||
    !keepsGrowing(envelope, axis, baseline, floorOf(axis, HEAP_FLOORS), growth)
  ) {
    // Just enough full GCs, two of them close together (the --heap switch forces one mid-load), say
    // little about a trend: what the post-load full GC kept is judged as with too few.
    return offHeap.length > 0 || envelope.length > LEAK_MIN_MAJOR_GCS
      ? offHeap
      : unconfirmedGrowth(run, thread, w, gc.fullGcs, postLoadHeap(thread, w));
  }
  const after = postLoadHeap(thread, w);
  if (releasedAfterLoad(thread, w, after, baseline, growth)) return offHeap;
  const onHeap = finding(run, w, axis, { growth, baseline, r2: fit.r2, after });
  // Both grew (kept Buffers: their JS objects on the heap, their bytes off it): the larger growth
  // leads; the other is folded under it (same holder: analyze-run's mergeSameCulprit keeps the first of equals).
  const offGrowth = Number(offHeap[0]?.evidence.externalGrowthBytes ?? 0);
  return offGrowth > growth ? [...offHeap, onHeap] : [onHeap, ...offHeap];
}

/**
 * Off-heap growth worth reporting: Buffers and ArrayBuffers kept alive hold their bytes outside
 * the JS heap (`external`), where the heap's trend and the allocation profile never see them.
 * Twice the heap's floors, per request and without requests, because external memory also
 * carries sockets' and zlib's buffers; its share is of the heap and external memory together
 * (an app's external baseline can be 1 MB, of which 20 % is nothing).
 */
export const LEAK_EXTERNAL_MIN_BYTES_PER_REQUEST = 2 * LEAK_TREND_MIN_BYTES_PER_REQUEST;
export const LEAK_EXTERNAL_MIN_GROWTH_BYTES = 2 * LEAK_MIN_GROWTH_BYTES;

/**
 * External memory that keeps rising: the lowest reading per segment of the window (a Buffer
 * becomes garbage when its owner does, and young ones are freed at every scavenge) must rise
 * steadily, from the second segment on too, after at least one full GC (which frees the old
 * garbage ones).
 */
function externalLeak(run: RunData, thread: ThreadTelemetry, w: Window, fullGcs: number): Finding[] {
  if (fullGcs < 1) return [];
  const samples = windowSamples(thread, w);
  const envelope = lowestPerSegment(
    samples.map((s) => ({ t: s.t, bytes: s.mem.external })),
    w,
  );
  if (envelope.length < LEAK_MIN_MAJOR_GCS) return [];
  const axis = trendAxis(thread, w);
  const { fit, growth } = trend(envelope, axis);
  const baseline = Math.max(1, extent(envelope.map((p) => p.bytes)).min);
  // The share is of all the memory the app holds: heap (lowest in the window) and external.
  const heapLow = extent(samples.map((s) => s.mem.heapUsed)).min;
  const floor = floorOf(axis, EXTERNAL_FLOORS);
  const memory = baseline + (Number.isFinite(heapLow) ? heapLow : 0);
  if (!rises(growth, memory, fit.r2, floor) || !keepsGrowing(envelope, axis, memory, floor, growth)) return [];
  if (externalReleasedAfterLoad(thread, w, baseline, growth)) return [];
  const mb = (b: number) => round(b / 1024 / 1024, 1);
  const perRequest = axis.requests > 0 ? growth / axis.requests : 0;
  const slope = growth / (w.durationMs / 1000);
  const last = samples[samples.length - 1]?.mem;
  // The Buffers' bytes are off the heap, but their JS objects (and the records holding them) are
  // in it: the retained view names who keeps them like any leak's.
  const held = leakCulprit(run, w);
  return [
    {
      code: 'HOTPATH_EXTERNAL_MEMORY_LEAK',
      category: 'memory-leak',
      severity: growth / baseline >= LEAK_CRITICAL_RATIO ? 'critical' : 'warning',
      title: 'Memory outside the JS heap (Buffers) keeps growing',
      summary:
        `External memory, the bytes of Buffers and ArrayBuffers, grew by ${mb(growth)} MB over ${round(w.durationMs / 1000, 0)} s ` +
        `(from ${mb(baseline)} MB, ${mb(slope * 60)} MB per minute${perRequest > 0 ? `, about ${round(perRequest, 0)} bytes per request` : ''}), ` +
        `a steady rise (R² ${round(fit.r2, 2)}) through ${fullGcs} full GC${fullGcs === 1 ? '' : 's'}.` +
        (last
          ? ` At the end: external ${mb(last.external)} MB (array buffers ${mb(last.arrayBuffers)} MB), JS heap ${mb(last.heapUsed)} MB, RSS ${mb(last.rss)} MB.`
          : '') +
        (held.culprit ? held.text : ''),
      evidence: {
        externalGrowthBytes: Math.round(growth),
        externalBaselineBytes: Math.round(baseline),
        slopeBytesPerSecond: Math.round(slope),
        fitR2: round(fit.r2, 3),
        fullGcs,
        trendAgainst: axis.by,
        ...(perRequest > 0 ? { bytesPerRequest: Math.round(perRequest) } : {}),
        ...(last ? { externalEndBytes: last.external, arrayBuffersEndBytes: last.arrayBuffers, rssEndBytes: last.rss } : {}),
        ...(held.culprit ? held.evidence : {}),
      },
      ...(held.culprit ? { culprit: held.culprit } : {}),
      recommendation: externalLeakAdvice,
      impact: LEAK_BASE_IMPACT,
    },
  ];
}

/**
 * Whether the external memory fell back after the load: the reading with the agent's post-load
 * full GC (or, without one, any reading in the 5 s after the window) below the baseline plus
 * LEAK_RELEASED_SHARE of the growth. Garbage Buffers keep their bytes until a GC frees their
 * objects: on a starved target few GCs run in the window (gzipSync's output buffers rose to 40 MB
 * through one full GC at 46 req/s, and were 3 MB after the post-load one), and the envelope climbs
 * with them. A leak keeps its bytes through that GC.
 */
function externalReleasedAfterLoad(thread: ThreadTelemetry, w: Window, baseline: number, growth: number): boolean {
  const limit = baseline + LEAK_RELEASED_SHARE * growth;
  const after = thread.samples.find((s) => s.postLoadGc !== undefined && s.t > w.end);
  if (after !== undefined) return after.mem.external < limit;
  return thread.samples.some((s) => s.t > w.end && s.t <= w.end + 5000 && s.mem.external < limit);
}

type HeapPoint = { t: number; bytes: number };

/**
 * What the heap's trend is read against: the requests served from the window's start (a leak
 * keeps bytes per request, so a request rate that swings, on a busy machine, bends a line against
 * time: cache-leak's heap read flat in time while the target was starved, then steep), or the
 * time in seconds when the window served fewer than LEAK_TREND_MIN_REQUESTS. `span` is the
 * window's extent on that axis, `requests` the requests it served.
 */
export interface TrendAxis {
  by: 'requests' | 'time';
  x: (t: number) => number;
  span: number;
  requests: number;
}

export function trendAxis(thread: ThreadTelemetry, w: Window): TrendAxis {
  const series = requestSeries(thread);
  const base = requestsAt(series, w.start);
  const requests = requestsAt(series, w.end) - base;
  if (requests >= LEAK_TREND_MIN_REQUESTS) return { by: 'requests', x: (t) => requestsAt(series, t) - base, span: requests, requests };
  return { by: 'time', x: (t) => (t - w.start) / 1000, span: w.durationMs / 1000, requests };
}

/** The line through the points against the axis, and the growth it gives over the whole window, bytes. */
function trend(points: HeapPoint[], axis: TrendAxis): { fit: LinearFit; growth: number } {
  const fit = linearFit(
    points.map((p) => axis.x(p.t)),
    points.map((p) => p.bytes),
  );
  return { fit, growth: fit.slope * axis.span };
}

/** The floors of a rise: per request served, or in bytes for a window without requests. */
interface Floors {
  perRequest: number;
  bytes: number;
}
const HEAP_FLOORS: Floors = { perRequest: LEAK_TREND_MIN_BYTES_PER_REQUEST, bytes: LEAK_MIN_GROWTH_BYTES };
const EXTERNAL_FLOORS: Floors = { perRequest: LEAK_EXTERNAL_MIN_BYTES_PER_REQUEST, bytes: LEAK_EXTERNAL_MIN_GROWTH_BYTES };

/** The growth, bytes over the window, a rise must reach on this axis. */
function floorOf(axis: TrendAxis, floors: Floors): number {
  return axis.by === 'requests' ? floors.perRequest * axis.requests : floors.bytes;
}

/** A leak's rise: large enough, against its floor and the baseline, and steady. */
function rises(growth: number, baseline: number, r2: number, minBytes: number): boolean {
  return growth >= minBytes && growth / baseline >= LEAK_MIN_GROWTH_RATIO && r2 >= LEAK_MIN_R2;
}

/**
 * A leak keeps growing: the trend must hold without the first full GC's reading. A heap that
 * only settled as the load began (JIT code, caches, the data of the requests in flight) rises
 * from that first reading and then stays flat, and with few full GCs, two of them close
 * together, such a step fits a line as well as a leak does (R² 0.99). Two points left fit
 * exactly (R² 1): then the size of the rise counts, and its rate against the whole line's (at
 * least LEAK_MIN_LATE_TO_EARLY of it, as per request: a warm-up flattens, a leak keeps its rate).
 */
function keepsGrowing(envelope: HeapPoint[], axis: TrendAxis, baseline: number, minBytes: number, wholeGrowth: number): boolean {
  const rest = envelope.slice(1);
  if (rest.length < 2) return false;
  const { fit, growth } = trend(rest, axis);
  return rises(growth, baseline, fit.r2, minBytes) && growth >= LEAK_MIN_LATE_TO_EARLY * wholeGrowth;
}

/**
 * A leak keeps what it holds when the load stops. Requests in flight hold their data (a 1 MB
 * response per request, queued writes while the client lags), so the heap after full GCs rises
 * with latency under load and falls once the requests drain: a heap after the load below the
 * baseline plus this share of the growth says the growth was not retained.
 */
export const LEAK_RELEASED_SHARE = 0.5;

/** The heap the agent read after the full GC it forced once the load was over (SampleMessage.postLoadGc). */
export function postLoadHeap(thread: ThreadTelemetry, w: Window): HeapPoint | undefined {
  const s = thread.samples.find((x) => x.postLoadGc !== undefined && x.t > w.end);
  return s?.postLoadGc ? { t: s.t, bytes: s.postLoadGc.heapAfter } : undefined;
}

/**
 * Whether the heap fell back after the load. The agent's reading after a full GC with no request
 * in flight (`after`) says it either way: a leak keeps its bytes through that GC. Without it (an
 * older agent, a main thread stuck at the end, a worker-thread target), any heap reading in the
 * 5 s after the window that fell that low (any GC lowers heapUsed, none raises it); no such
 * reading (no GC ran before the target was stopped) leaves the growth standing.
 */
function releasedAfterLoad(thread: ThreadTelemetry, w: Window, after: HeapPoint | undefined, baseline: number, growth: number): boolean {
  const limit = baseline + LEAK_RELEASED_SHARE * growth;
  if (after !== undefined) return after.bytes < limit;
  return thread.samples.some((s) => s.t > w.end && s.t <= w.end + 5000 && s.mem.heapUsed < limit);
}

/**
 * The heap left after each full GC, thinned to the lowest point per segment of the window when
 * there are more GCs than segments (a reading just after a GC includes what was allocated since,
 * so the lowest one per segment is the envelope). With few full GCs every one is a point: two in
 * the same segment are still two measurements of what survived.
 */
function heapEnvelope(points: GcActivity['heapAfterFull'], w: Window): HeapPoint[] {
  if (points.length < LEAK_MIN_MAJOR_GCS) return [];
  return points.length <= LEAK_SEGMENTS ? points : lowestPerSegment(points, w);
}

/** The lowest point in each of the LEAK_SEGMENTS segments of the window that has one. */
function lowestPerSegment(points: HeapPoint[], w: Window): HeapPoint[] {
  const seg = w.durationMs / LEAK_SEGMENTS;
  const out: HeapPoint[] = [];
  for (let i = 0; i < LEAK_SEGMENTS; i++) {
    const inSeg = points.filter((p) => p.t >= w.start + i * seg && p.t < w.start + (i + 1) * seg);
    if (inSeg.length > 0) out.push(inSeg.reduce((a, b) => (b.bytes < a.bytes ? b : a)));
  }
  return out;
}

/** Heap growth worth a note when too few full GCs ran to tell garbage from a leak. */
export const LEAK_UNCONFIRMED_MIN_BYTES = 16 * 1024 * 1024;

/**
 * Kept after the full GC the agent forces once the load is over, against the heap the load began
 * with: this many times the start (and LEAK_UNCONFIRMED_MIN_BYTES) is a warning even with too few
 * full GCs for a trend. An unbounded queue drained slower than it filled kept 23.6 MB over a
 * 12.3 MB start after a 5 s load with two full GCs, and had been told nothing.
 */
export const LEAK_RETAINED_WARN_RATIO = 1;

/**
 * The heap grew a lot, but too few full GCs ran to see its trend. The full GC the agent forced
 * after the load answers part of it: less than LEAK_MIN_GROWTH_BYTES (and LEAK_MIN_GROWTH_RATIO
 * of the start) kept over where the load began was garbage or requests in flight (no note); more
 * is an info note, and at LEAK_RETAINED_WARN_RATIO times the start a warning, with what holds
 * it when the run has a heap profile.
 */
function unconfirmedGrowth(run: RunData, thread: ThreadTelemetry, w: Window, majors: number, after: HeapPoint | undefined): Finding[] {
  const samples = windowSamples(thread, w);
  if (samples.length < 2) return [];
  const start = samples[0].mem.heapUsed;
  const end = samples[samples.length - 1].mem.heapUsed;
  if (end - start < LEAK_UNCONFIRMED_MIN_BYTES) return [];
  const kept = after !== undefined ? after.bytes - start : undefined;
  if (kept !== undefined && kept < Math.max(LEAK_MIN_GROWTH_BYTES, LEAK_MIN_GROWTH_RATIO * start)) return [];
  const warn = kept !== undefined && kept >= LEAK_UNCONFIRMED_MIN_BYTES && kept >= LEAK_RETAINED_WARN_RATIO * start;
  const held = warn ? leakCulprit(run, w) : undefined;
  const mb = (b: number) => round(b / 1024 / 1024, 1);
  return [
    {
      code: 'HOTPATH_HEAP_GROWTH_UNCONFIRMED',
      category: 'memory-leak',
      severity: warn ? 'warning' : 'info',
      title: warn
        ? `The heap kept ${mb(kept!)} MB after the load, with too few full GCs to see its trend`
        : 'The heap grew, but too few full GCs ran to call it a leak',
      summary:
        `Heap used went from ${mb(start)} MB to ${mb(end)} MB during the load with ${majors} full GC${majors === 1 ? '' : 's'}; ` +
        (after !== undefined
          ? `a full GC once the load was over left ${mb(after.bytes)} MB: ${warn ? `${round(kept! / Math.max(1, start), 1)} times the heap the load began with is still held` : 'most of the growth is still held'}, but with so few full GCs during the load its trend is unknown.`
          : `only full GCs free the old generation, so this may be garbage not yet collected.`) +
        (held?.text ?? ''),
      evidence: {
        heapUsedStartBytes: start,
        heapUsedEndBytes: end,
        majorGcs: majors,
        minMajorGcs: LEAK_MIN_MAJOR_GCS,
        ...(after !== undefined ? { heapAfterLoadGcBytes: after.bytes, keptAfterLoadBytes: kept } : {}),
        ...(held?.evidence ?? {}),
      },
      ...(held?.culprit ? { culprit: held.culprit } : {}),
      recommendation:
        `Run longer (for example \`-d 60s\`) so that at least ${LEAK_MIN_MAJOR_GCS} full GCs happen, with \`--heap\` to see what stays alive.` +
        (warn ? `\n\n${memoryLeakAdvice}` : ''),
      impact: warn ? LEAK_BASE_IMPACT : 0,
    },
  ];
}

interface LeakTrend {
  growth: number;
  baseline: number;
  r2: number;
  after: HeapPoint | undefined;
}

function finding(run: RunData, w: Window, axis: TrendAxis, { growth, baseline, r2, after }: LeakTrend): Finding {
  const requests = axis.requests;
  const slope = growth / (w.durationMs / 1000);
  const trend = latencyTrend(run);
  const { culprit, text, evidence, profiled, advice } = leakCulprit(run, w);
  const mb = (b: number) => round(b / 1024 / 1024, 1);
  const perRequest = requests > 0 ? growth / requests : 0;
  return buildFinding({
    code: 'HOTPATH_MEMORY_LEAK',
    category: 'memory-leak',
    severity: growth / baseline >= LEAK_CRITICAL_RATIO ? 'critical' : 'warning',
    title: 'The heap keeps growing after garbage collection',
    summary:
      `The heap left after GC grew by ${mb(growth)} MB over ${round(w.durationMs / 1000, 0)} s (from ${mb(baseline)} MB, ${mb(slope * 60)} MB per minute` +
      `${perRequest > 0 ? `, about ${round(perRequest, 0)} bytes per request` : ''}), a steady rise (R² ${round(r2, 2)}${axis.by === 'requests' ? ' against the requests served' : ''}).` +
      (after ? ` Once the load was over, a full GC left ${mb(after.bytes)} MB: the app still holds it.` : '') +
      text,
    evidence: {
      heapGrowthBytes: Math.round(growth),
      heapBaselineBytes: Math.round(baseline),
      slopeBytesPerSecond: Math.round(slope),
      fitR2: round(r2, 3),
      trendAgainst: axis.by,
      ...(perRequest > 0 ? { bytesPerRequest: Math.round(perRequest) } : {}),
      ...(after ? { heapAfterLoadGcBytes: after.bytes } : {}),
      ...evidence,
    },
    culprit,
    recommendation: profiled ? (advice ?? memoryLeakAdvice) : `${advice ?? memoryLeakAdvice}\n\n${heapProfileHint}`,
    growth: { trend, baseImpact: LEAK_BASE_IMPACT },
  });
}

/**
 * Bytes kept per request from the middle of the load to its end that make a leak: healthy servers
 * kept under 250 (JIT code and feedback of a slow warm-up at 450 req/s: 200), a leak of a record
 * per request 1,000 and more.
 */
export const LEAK_MIN_BYTES_PER_REQUEST = 512;
/** And that growth against the memory at the middle (heap, or heap and external): a floor relative to the heap. */
export const LEAK_MIN_LATE_GROWTH_SHARE = 0.05;
/** The second half keeps at least this share of the first half's rate: a warm-up flattens, a leak does not. */
export const LEAK_MIN_LATE_TO_EARLY = 0.5;
/**
 * A first half that fell (a rate at or below 0) says the start reading held garbage (heapUsed
 * before the load, read without a GC): the rate cannot be shown to hold, so the second half's
 * growth must pass the relative floor a growth with nothing to compare to passes
 * (LEAK_MIN_GROWTH_RATIO, 20 % of the memory at the middle) instead of 5 %. Measured: on a slow,
 * busy run a healthy Hono route kept 0.4 MB over its last 147 requests (2,853 bytes each, 5.3 % of
 * its 7.9 MB heap: JIT code and feedback of a warm-up spread over few requests) after a first half
 * read at -6,083; the 40 saved runs of apps that keep nothing read as a leak after a first half
 * below 0 kept 5.0-9.2 %; a module-level array never trimmed in a cluster worker kept 31 % after a
 * first half read at -5,541 (a sort over a growing leaderboard 11 %: its growth is handler-growth's).
 */
export const LEAK_UNCOMPARED_MIN_GROWTH_SHARE = LEAK_MIN_GROWTH_RATIO;
/** Requests in the second half for its rate to say anything. */
export const LEAK_MIN_LATE_REQUESTS = 100;
/**
 * Below this many requests in the second half, that half may still hold the warm-up: V8 compiles
 * and optimizes a function after so many calls, and a framework fills its lazy caches on first
 * use, so a warm-up is spread over a server's first requests, not its first seconds, and a run
 * that served few of them (a slow route, a target starved by a busy machine) ends inside it, its
 * rate holding from the first half to the second. What it leaves in the second half is a fixed
 * amount, a share of the heap that grows as the requests get fewer, so the growth's floor
 * relative to the heap (LEAK_MIN_LATE_GROWTH_SHARE) is raised by this count over the requests,
 * up to the floor of a growth with nothing to compare to (LEAK_UNCOMPARED_MIN_GROWTH_SHARE).
 * Measured (2026-11-28, a healthy NestJS 10 route beside a spinner per core, load 7-15, the
 * target getting 21-29 % of the CPU its loop asked for): 0.65-0.76 MB kept over the last 232,
 * 396 and 522 requests (1,243-3,191 bytes each, 5.2-6.1 % of a 12.5 MB heap) after a first half at
 * 1,572-5,556, read as a leak in 3 of 11 runs; the runs with 1,400-1,850 requests read none. The
 * hapi-request-log-leak scenario (~1 KB per request at 400 a second) kept 9.9 % over 1,030.
 */
export const LEAK_WARM_LATE_REQUESTS = 1000;

/** Whether the second half kept enough per request, against the memory at the middle and the first half. */
export function keptPerRequest(g: GrowthPerRequest, memoryAtMid: number): boolean {
  const fell = g.earlyBytesPerRequest !== undefined && g.earlyBytesPerRequest <= 0;
  const warming = Math.min(
    LEAK_UNCOMPARED_MIN_GROWTH_SHARE,
    (LEAK_MIN_LATE_GROWTH_SHARE * LEAK_WARM_LATE_REQUESTS) / Math.max(1, g.lateRequests),
  );
  const shareFloor = fell ? LEAK_UNCOMPARED_MIN_GROWTH_SHARE : Math.max(LEAK_MIN_LATE_GROWTH_SHARE, warming);
  return (
    g.lateRequests >= LEAK_MIN_LATE_REQUESTS &&
    g.lateBytesPerRequest >= LEAK_MIN_BYTES_PER_REQUEST &&
    g.lateGrowth >= shareFloor * memoryAtMid &&
    (g.earlyBytesPerRequest === undefined || fell || g.lateBytesPerRequest >= LEAK_MIN_LATE_TO_EARLY * g.earlyBytesPerRequest)
  );
}

/**
 * Heap a request abandoned by its client may still hold in the app at the post-load GC (queued
 * behind a lock or a pool: its request, response and socket objects, the abort's error and stack,
 * the agent's record of it), left out of what the second half kept. Measured: 20 such requests
 * behind a lock read 0.3 MB kept by an app that keeps nothing (15 KB each); requests answered
 * before the load's end are garbage by then and are not counted (leak scenarios: none abandoned).
 */
export const LEAK_ABANDONED_REQUEST_BYTES = 32 * 1024;

/** Requests never answered (the agent's unanswered routes, cumulative) between two moments of the thread. */
function unansweredBetween(thread: ThreadTelemetry, from: number, to: number): number {
  const at = (t: number) =>
    thread.samples.findLast((s) => s.t <= t && s.unanswered !== undefined)?.unanswered?.reduce((a, r) => a + r.count, 0) ?? 0;
  return Math.max(0, at(to) - at(from));
}

/** Readings before the load this close to its start can stand for its start, ms. */
const START_READING_BEFORE_MS = 2000;

/**
 * The leak a short run shows: bytes kept per request in the second half of the load, on the heap
 * (full GC readings) or off it (external memory after them). The GC after the load is the end
 * reading (no request in flight), so a run without it (a stuck main thread, a worker-thread
 * target) is not judged here.
 */
function perRequestLeak(run: RunData): Finding[] {
  const w = loadWindow(run);
  const thread = w ? busiestThread(run, w) : undefined;
  if (!w || !thread) return [];
  const post = thread.samples.find((s) => s.postLoadGc !== undefined && s.t > w.end);
  if (!post?.postLoadGc) return [];
  const series = requestSeries(thread);
  const full = gcActivity([thread], null).heapAfterFull.filter((p) => p.t <= w.end);
  // The agent's mid-load GC read the heap right after it (the canary reads it later, with what was promoted since).
  const forced = thread.stalls
    .filter((s) => s.byAgent === 'mid-load-gc' && s.heapAfter !== undefined)
    .map((s) => ({ t: s.start + s.durationMs, bytes: s.heapAfter! }));
  const mid = midReading([...full, ...forced], w);
  if (!mid) return [];
  const before = thread.samples.filter((s) => s.t <= w.start && s.t > w.start - START_READING_BEFORE_MS);
  const startGc = full.find((p) => p.t >= w.start - START_READING_BEFORE_MS && p.t < mid.t);
  const start = startGc ?? (before.length > 0 ? { t: w.start, bytes: extent(before.map((s) => s.mem.heapUsed)).min } : undefined);
  const abandoned = unansweredBetween(thread, mid.t, post.t);
  const measured = growthPerRequest(series, w, start, mid, { t: post.t, bytes: post.postLoadGc.heapAfter });
  const kept = measured && withoutAbandoned(measured, abandoned, LEAK_ABANDONED_REQUEST_BYTES);
  // A rise smaller than the middle readings' own swing is noise; and a heap left after the load
  // below what a full GC left near its start kept nothing over the window (a first half that
  // fell: its rate is no comparison).
  const heap =
    kept && kept.lateGrowth > midSwing([...full, ...forced], w) && (startGc === undefined || post.postLoadGc.heapAfter > startGc.bytes)
      ? kept
      : undefined;
  const atMid = thread.samples.find((s) => s.t >= mid.t);
  const ext = atMid ? externalPerRequest(thread, w, series, mid, atMid.mem.external, post.mem.external) : undefined;
  const out: Finding[] = [];
  if (heap && keptPerRequest(heap, mid.bytes)) out.push(perRequestFinding(run, w, heap, 'heap', abandoned));
  if (ext && atMid && keptPerRequest(ext, mid.bytes + atMid.mem.external)) out.push(perRequestFinding(run, w, ext, 'external'));
  return out.sort((a, b) => Number(b.evidence.lateGrowthBytes) - Number(a.evidence.lateGrowthBytes));
}

/** External memory: the lowest reading in the first quarter, the one right after the mid-load GC, the one after the post-load GC. */
function externalPerRequest(
  thread: ThreadTelemetry,
  w: Window,
  series: ReturnType<typeof requestSeries>,
  mid: Reading,
  midBytes: number,
  endBytes: number,
): GrowthPerRequest | undefined {
  const early = windowSamples(thread, w).filter((s) => s.t < w.start + w.durationMs / 4);
  const start = early.length > 0 ? early.reduce((a, b) => (b.mem.external < a.mem.external ? b : a)) : undefined;
  return growthPerRequest(
    series,
    w,
    start ? { t: start.t, bytes: start.mem.external } : undefined,
    { t: mid.t, bytes: midBytes },
    { t: w.end, bytes: endBytes },
  );
}

function perRequestFinding(run: RunData, w: Window, g: GrowthPerRequest, where: 'heap' | 'external', abandoned = 0): Finding {
  const held = leakCulprit(run, w);
  const mb = (b: number) => round(b / 1024 / 1024, 1);
  const what = where === 'heap' ? 'the heap left after full GCs' : 'external memory (the bytes of Buffers and ArrayBuffers) after full GCs';
  const early =
    g.earlyBytesPerRequest !== undefined && g.earlyBytesPerRequest > 0 && g.start
      ? ` In the first half it kept ${round(g.earlyBytesPerRequest, 0)} bytes per request: the rate holds, it is not a warm-up that flattens.`
      : '';
  const baseline = g.start?.bytes ?? g.mid.bytes;
  return buildFinding({
    code: where === 'heap' ? 'HOTPATH_MEMORY_LEAK' : 'HOTPATH_EXTERNAL_MEMORY_LEAK',
    category: 'memory-leak',
    severity: g.end.bytes - baseline >= LEAK_CRITICAL_RATIO * baseline ? 'critical' : 'warning',
    title:
      where === 'heap'
        ? 'The heap keeps growing with every request'
        : 'Memory outside the JS heap (Buffers) keeps growing with every request',
    summary:
      `From the middle of the load to its end, ${what} grew by ${mb(g.lateGrowth)} MB over ${g.lateRequests} requests ` +
      `(${mb(g.mid.bytes)} → ${mb(g.end.bytes)} MB, measured after a full GC once the load was over): about ${round(g.lateBytesPerRequest, 0)} bytes kept per request.` +
      early +
      (abandoned > 0
        ? ` ${abandoned} requests the client gave up on may still be held by the app; ${mb(abandoned * LEAK_ABANDONED_REQUEST_BYTES)} MB were left out for them.`
        : '') +
      held.text,
    evidence: {
      bytesPerRequest: Math.round(g.lateBytesPerRequest),
      ...(g.earlyBytesPerRequest !== undefined ? { earlyBytesPerRequest: Math.round(g.earlyBytesPerRequest) } : {}),
      lateGrowthBytes: Math.round(g.lateGrowth),
      lateRequests: g.lateRequests,
      [where === 'heap' ? 'heapMidBytes' : 'externalMidBytes']: Math.round(g.mid.bytes),
      [where === 'heap' ? 'heapAfterLoadGcBytes' : 'externalAfterLoadGcBytes']: Math.round(g.end.bytes),
      ...(g.start ? { [where === 'heap' ? 'heapStartBytes' : 'externalStartBytes']: Math.round(g.start.bytes) } : {}),
      basis: 'per-request',
      ...(abandoned > 0 ? { abandonedRequests: abandoned, abandonedAllowanceBytes: abandoned * LEAK_ABANDONED_REQUEST_BYTES } : {}),
      ...held.evidence,
    },
    culprit: held.culprit,
    recommendation:
      (where === 'heap' ? (held.advice ?? memoryLeakAdvice) : externalLeakAdvice) + (held.profiled ? '' : `\n\n${heapProfileHint}`),
    growth: { trend: latencyTrend(run), baseImpact: LEAK_BASE_IMPACT },
  });
}
