// GC pressure: the share of the load window spent in garbage collection, by kind, and the
// scavenge rate, estimated from the GCs observed (signals/gc-activity.ts: the agent observes GCs
// in windows). Culprit: the app function allocating the most (sampling heap profile, with
// allocation inside dependencies charged to the nearest app frame). A --max-semi-space-size
// is suggested only when scavenges dominate and are frequent, with those figures as evidence.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { buildFinding } from './build-finding.js';
import { loadWindow, targetThreads } from './signals/load-window.js';
import { loadGcActivity, roundKinds, type GcActivity } from './signals/gc-activity.js';
import { allocationsOf, type AllocationSite } from './signals/allocation-view.js';
import { frameCulprit, describeCulprit } from './signals/culprit.js';
import { cpuViewOf } from './signals/cpu-view.js';
import { round } from './signals/stats.js';
import { allocationAdvice, heapProfileHint, semiSpaceAdvice, stackAllocationAdvice } from './gc-pressure.advice.js';
import { loopStats } from './signals/loop-stats.js';
import { isStarved } from './event-loop-blocking.js';

/**
 * GC share of wall time worth mentioning (info): the GC story's 6 % is where tuning starts to
 * pay. GC durations are wall time, so on a busy shared machine a healthy hello world reaches
 * 3-6 %: below the warning level.
 */
export const GC_INFO_SHARE = 0.05;
/** A warning from 10 %: the upper end of the "suggest a semi-space sweep" range (foundations 1.8). */
export const GC_WARN_SHARE = 0.1;
/** Above this share GC is a main cost of every request. */
export const GC_CRITICAL_SHARE = 0.25;
/** Scavenges must be at least this share of GC time for the semi-space advice. */
export const SEMI_SPACE_MIN_MINOR_SHARE = 0.6;
/** And this frequent (per second): the young generation fills faster than it can be useful. */
export const SEMI_SPACE_MIN_SCAVENGES_PER_S = 10;
/** The size suggested: the measured sweet spot in the GC story (16 → 64 MiB cut GC from 6 % to under 4 %). */
export const SEMI_SPACE_SUGGESTED_MIB = 64;
/** An allocation site must hold this share of sampled bytes to be named the culprit. */
export const ALLOCATION_CULPRIT_MIN_SHARE = 0.1;
/**
 * Pressure is a rate: fewer GCs than this in the window are a pause or two, not pressure, and at
 * most a note. One major GC of a small heap read 230 ms of wall time (10 % of a short load) on a
 * hello-world app the machine kept off the cores; a share drawn from one event is not a rate.
 */
export const GC_MIN_PRESSURE_COUNT = 3;
/**
 * The app's own allocations (AllocationView.appChosenShare) must be at least this share of the
 * sampled bytes for GC pressure to be the app's to fix. Below it the garbage is the server stack
 * answering requests: a healthy Express 5 JSON route read 10-12 % of GC on a 2-core machine with
 * 66 % of its bytes allocated before any app frame (the HTTP parser, the router) and the rest in
 * res.json's path under the handler, 0.2 % its own; allocation-churn's handler chose most of its
 * bytes. Then the finding is a note, names no allocator (the handler only carries the
 * framework's bytes) and says where the garbage comes from.
 */
export const GC_APP_CHOSEN_MIN_SHARE = 0.2;
/**
 * And the GC those bytes explain (the GC share × the app's share of the bytes: what the app could
 * remove by allocating nothing of its own) must reach this share of the window, the level a GC
 * share is worth mentioning at. Below it the GC is still the server stack's, whatever the app's
 * share: a healthy Express 4 app with a middleware stack (a request id, cookie parsing, CORS
 * headers, Node's `setHeader` inlined into them) read 13.3 % of GC with 26 % of the bytes under
 * its middleware (3.5 % of the window), its scavenges 5 ms each at a load average of 6-7
 * (2026-11-28, probe round s); GC pressure an app causes read 8-15 % of the window from its own
 * bytes (a deep copy, hydration, a schema built per item, AsyncLocalStorage per request).
 */
export const GC_APP_EXPLAINED_MIN_SHARE = GC_INFO_SHARE;
/**
 * The GCs observed stand for the whole window only when the observer was on for at least this
 * share of it. Below it (a server scavenging more than 10 times a second: the agent observes a
 * slice of every second, docs/agent.md) the GC time is extrapolated from a few slices per thread,
 * and a major GC or a burst of incremental marking caught in one of them, or missed, moves the
 * share by several points: cluster-e417-etag read 7.2-16.7 % over six runs from slices covering
 * 30-43 % of the time (a per-slice share of 0-63 %), its CPU profile 11.1-16.3 % (probe round x).
 */
export const GC_SLICES_MIN_COVERAGE = 0.9;
/**
 * Then the share is read from the CPU profile's `(garbage collector)` samples, which cover the
 * whole window (of the busiest target thread, the one the rest of the analysis reads), when the
 * profile has at least this much sampled time in it (ms): 1,000 samples at 1 ms put a share of
 * 10 % within about a point (binomial standard error 0.95 points), 100 at 10 ms within 3. The
 * default rate (src/run/cpu-interval.ts) gives a load window about 1,000 samples whatever its
 * length, so a default run's profile is always well past this floor.
 */
export const GC_PROFILE_MIN_MS = 1000;

export function gcPressure(run: RunData): Finding[] {
  const w = loadWindow(run);
  const threads = targetThreads(run);
  if (!w || threads.length === 0) return [];
  const gc = loadGcActivity(run);
  if (gc.events.length === 0 || gc.sampledMs <= 0) return [];
  const views = gcShareViews(run, gc);
  const share = views.share;
  if (share < GC_INFO_SHARE) return [];
  // Pressure is a rate: a kind of GC seen fewer than GC_MIN_PRESSURE_COUNT times is a pause or
  // two (the first major GCs of a heap that is still growing), stated but not a rate of pressure.
  const recurring = recurringShare(gc);
  const pressure = share * recurring;
  return [finding(run, gc, share, pressure, views)];
}

/**
 * The share of the load window the target's GC took, and the views it was read from (the GCs
 * observed, scaled on a starved target; the CPU profile's samples): gc-pressure's reading, which
 * the healthy finding states too. `gc` must have observed time (gc.sampledMs > 0).
 */
export function gcShareViews(run: RunData, gc: GcActivity): ShareViews & { share: number } {
  const wallShare = gc.estimatedMs / gc.sampledMs;
  // GC durations are wall time. On a target that got less CPU than its loop asked for (other
  // processes on the cores), they include the wait for the CPU, and V8's parallel scavenger waits
  // for its helper threads too (busy-machine runs of two scenarios read 14-15 %). The share is
  // the one a machine with free cores would show: GC and the loop's other work shrink to the part
  // the target ran (× cpuPerActive), the idle time stays. A saturated loop (ELU 1) keeps its share
  // (it would do more work in the window, with the same GC per request); an idle one scales fully.
  const s = loopStats(run);
  const starved = s !== undefined && isStarved(s) ? s.cpuPerActive : undefined;
  const busy = Math.min(1, Math.max(0, s?.eluMean ?? 0));
  const corrected = starved !== undefined ? (wallShare * starved) / (1 - busy + busy * starved) : wallShare;
  // The scaling above takes GC to wait for the CPU as much as the rest of the loop's work; it waits
  // more. V8's parallel scavenger hands work to helper threads and the main thread waits for a
  // helper the OS preempted: a healthy Express app beside other tenants read 5-20 ms scavenges
  // (2-4 a second) and 20-90 ms major GCs of a small heap. On a starved target the GC share is
  // also read where the machine cannot inflate it as much, the CPU profile's samples: the
  // sampling signal is handled when the thread runs, so time off the cores is mostly unsampled.
  // Both views see an app's own churn (allocation-churn read 19 % of its samples in GC alone on
  // the cores and 23 % beside a spinning process per core, 24 % of the wall time), so the lesser is kept.
  const sampled = gcSampleShare(run);
  // The slices of a frequently collecting server are a few per thread and the GC they catch is
  // lumpy (a major GC, a burst of incremental marking): the profile's samples span the whole window
  // and also see the GC work done between pauses (incremental marking steps, sweeping), which the
  // observer never reports. Where the observer saw only slices of a target that had the CPU, the
  // profile's share is the one read. A starved target keeps the lesser of the two views above: its
  // samples swell too (a healthy Fastify stream beside two spinners read 22.5 % of its samples in
  // GC, 31 % of its active ones, against 12.7-16.5 % in the other runs), and a lesser share is the
  // direction that raises no false alarm.
  const fromProfile = sampled !== undefined && gc.coverage < GC_SLICES_MIN_COVERAGE && starved === undefined;
  const share = fromProfile ? sampled : sampled !== undefined && starved !== undefined ? Math.min(corrected, sampled) : corrected;
  return { share, wallShare, sampledShare: sampled, fromProfile, ...(starved !== undefined ? { cpuPerActive: starved } : {}) };
}

/** Of the GC time, the part in kinds seen at least GC_MIN_PRESSURE_COUNT times in the window. */
export function recurringShare(gc: GcActivity): number {
  if (gc.estimatedMs <= 0) return 0;
  let ms = 0;
  for (const k of Object.values(gc.estimated)) if (k.count >= GC_MIN_PRESSURE_COUNT) ms += k.totalMs;
  return ms / gc.estimatedMs;
}

/** The share of the CPU profile's samples (idle ones included: a share of the window) spent in GC, when the run has a profile of GC_PROFILE_MIN_MS or more. */
function gcSampleShare(run: RunData): number | undefined {
  const view = cpuViewOf(run);
  if (!view || view.totalUs < GC_PROFILE_MIN_MS * 1000) return undefined;
  return (view.work.get('gc') ?? 0) / view.totalUs;
}

/** Where the share came from: the observed GCs' wall time, the profile's samples, the CPU the target had when starved. */
export interface ShareViews {
  wallShare: number;
  sampledShare: number | undefined;
  fromProfile: boolean;
  cpuPerActive?: number;
}

function finding(run: RunData, gc: GcActivity, share: number, pressure: number, views: ShareViews): Finding {
  const kinds = gc.estimated;
  const totalMs = gc.estimatedMs;
  const minor = kinds.minor ?? { count: 0, totalMs: 0 };
  const minorShare = totalMs > 0 ? minor.totalMs / totalMs : 0;
  // Per thread-second of observation: the rate each serving thread scavenges at.
  const observedMinor = gc.observed.minor ?? { count: 0, totalMs: 0 };
  const scavengesPerS = gc.observedMs > 0 ? (observedMinor.count * 1000) / gc.observedMs : 0;
  const semiSpace = minorShare >= SEMI_SPACE_MIN_MINOR_SHARE && scavengesPerS >= SEMI_SPACE_MIN_SCAVENGES_PER_S;
  const alloc = allocationsOf(run);
  const appExplained = alloc !== undefined ? share * alloc.appChosenShare : undefined;
  const fewOwn = alloc !== undefined && alloc.appChosenShare < GC_APP_CHOSEN_MIN_SHARE;
  const stack = fewOwn || (appExplained !== undefined && appExplained < GC_APP_EXPLAINED_MIN_SHARE);
  const site = !stack && alloc?.culprit && alloc.culprit.share >= ALLOCATION_CULPRIT_MIN_SHARE ? alloc.culprit : undefined;
  // A library the app calls that allocated more in its own callbacks than any app function names its caller.
  const deferred = !stack ? alloc?.libraries.find((l) => l.share >= ALLOCATION_CULPRIT_MIN_SHARE && l.caller) : undefined;
  const library = deferred && (!site || deferred.share > site.share) ? deferred : undefined;
  const top = library ? undefined : site;
  const caller = library?.caller;
  const culprit = top ? frameCulprit(top.frame, run.cwd) : caller ? frameCulprit(caller, run.cwd) : undefined;
  const advice = [
    stack ? stackAllocationAdvice : allocationAdvice(culprit ? `\`${culprit.function}\` (${culprit.file}:${culprit.line})` : undefined),
  ];
  // A run of a command gets the exact experiment to run; one of --url (no command) the flag.
  const command = run.meta.target?.pid !== undefined || !/^https?:\/\//i.test(run.meta.command[0] ?? '') ? run.meta.command : undefined;
  if (semiSpace) advice.push(semiSpaceAdvice(SEMI_SPACE_SUGGESTED_MIB, command));
  if (!alloc) advice.push(heapProfileHint);
  return buildFinding({
    code: 'HOTPATH_GC_PRESSURE',
    category: 'gc-pressure',
    severity:
      gc.estimatedCount < GC_MIN_PRESSURE_COUNT || stack
        ? 'info'
        : pressure >= GC_CRITICAL_SHARE
          ? 'critical'
          : pressure >= GC_WARN_SHARE
            ? 'warning'
            : 'info',
    summary:
      (views.fromProfile
        ? `GC took ${round(share * 100, 1)} % of the load window by the CPU profile's samples`
        : `GC took about ${round(totalMs, 0)} ms, ${round(share * 100, 1)} % of the load window`) +
      ` (${round(minorShare * 100, 0)} % of it in scavenges, ${round(scavengesPerS, 1)} per second)` +
      `${gc.coverage < 0.99 ? `, estimated from the ${gc.events.length} GCs seen while GCs were observed (${round(gc.coverage * 100, 0)} % of the time)` : ''}.` +
      (gc.estimatedCount < GC_MIN_PRESSURE_COUNT
        ? ` Only ${gc.estimatedCount === 1 ? 'one GC' : `${gc.estimatedCount} GCs`}: a pause, too few to call pressure.`
        : pressure < share
          ? ` Of it, ${round((share - pressure) * 100, 1)} % of the window went to kinds of GC seen fewer than ${GC_MIN_PRESSURE_COUNT} times: pauses, not a rate of pressure.`
          : '') +
      shareSource(views) +
      (culprit && top
        ? ` The most allocating function is ${describeCulprit(culprit)} with ${round(top.share * 100, 0)} % of sampled bytes.`
        : culprit && library
          ? ` ${round(library.share * 100, 0)} % of the sampled bytes were allocated by ${library.name}, which ${describeCulprit(culprit)} calls, in callbacks of its own (no app frame on the stack: work it deferred, such as a logger formatting and writing its entries).`
          : '') +
      (stack && fewOwn
        ? ` Only ${round((alloc?.appChosenShare ?? 0) * 100, 0)} % of the sampled bytes were allocated by the app's own code; the rest by Node and the framework answering each request, so this is the cost of the server stack, not an app bug.`
        : stack
          ? ` ${round((alloc?.appChosenShare ?? 0) * 100, 0)} % of the sampled bytes were allocated by the app's own code, about ${round((appExplained ?? 0) * 100, 1)} % of the window in GC; the rest by Node and the framework answering each request, so this is mostly the cost of the server stack, not an app bug.`
          : ''),
    evidence: {
      gcShare: round(share, 4),
      gcMs: round(totalMs, 1),
      gcCount: gc.estimatedCount,
      byKind: roundKinds(kinds),
      observedGcs: gc.events.length,
      observedShareOfTime: round(gc.coverage, 3),
      scavengesPerSecond: round(scavengesPerS, 2),
      minorShareOfGc: round(minorShare, 3),
      meanScavengeMs: observedMinor.count > 0 ? round(observedMinor.totalMs / observedMinor.count, 3) : 0,
      ...(pressure < share ? { recurringGcShare: round(pressure, 4) } : {}),
      ...(views.cpuPerActive !== undefined || views.fromProfile ? { gcWallShare: round(views.wallShare, 4) } : {}),
      ...(views.cpuPerActive !== undefined ? { cpuPerActive: round(views.cpuPerActive, 3) } : {}),
      ...(views.sampledShare !== undefined && (views.cpuPerActive !== undefined || views.fromProfile)
        ? { gcSampleShare: round(views.sampledShare, 4) }
        : {}),
      ...(views.fromProfile ? { gcShareSource: 'cpu-profile' } : {}),
      ...(alloc
        ? {
            topAllocators: alloc.sites
              .slice(0, 5)
              .map((s) => ({ function: s.frame.name, file: s.frame.file, line: s.frame.line, share: round(s.share, 3) })),
          }
        : {}),
      ...(alloc ? { appAllocationShare: round(alloc.appChosenShare, 3) } : {}),
      ...(appExplained !== undefined ? { appExplainedGcShare: round(appExplained, 4) } : {}),
      ...(semiSpace ? { suggestedSemiSpaceMiB: SEMI_SPACE_SUGGESTED_MIB } : {}),
    },
    culprit,
    recommendation: advice.join('\n\n'),
    // The time this explains: collecting the garbage plus making it (the allocating functions'
    // CPU, weighted by their share of the bytes), so it ranks against a blocking finding that
    // names a neighbour of the allocator.
    impact: Math.min(1, share + (alloc ? allocatorCpuShare(run, alloc.sites) : 0)),
  });
}

/** The sentence saying which view the share was read from, when it is not simply the GCs observed. */
function shareSource(v: ShareViews): string {
  const sampled = v.sampledShare !== undefined ? round(v.sampledShare * 100, 1) : undefined;
  if (v.fromProfile) {
    return ` Those GCs extrapolate to ${round(v.wallShare * 100, 1)} % of the wall time; the profile's samples span the whole window and also see the GC work done between pauses.`;
  }
  if (v.cpuPerActive === undefined) return '';
  return ` The machine was busy (the target had the CPU ${round(v.cpuPerActive * 100, 0)} % of its loop's active time): GC took ${round(v.wallShare * 100, 1)} % of the wall time, waiting for the CPU included${sampled !== undefined ? ` (${sampled} % of the CPU profile's samples)` : ''}; the share above is what free cores would show.`;
}

/** Σ (share of sampled bytes × share of active CPU) over the app functions that allocate most. */
function allocatorCpuShare(run: RunData, sites: readonly AllocationSite[]): number {
  const view = cpuViewOf(run);
  if (!view || view.activeUs <= 0) return 0;
  let total = 0;
  for (const site of sites) {
    if (site.frame.kind !== 'app' || site.share < ALLOCATION_CULPRIT_MIN_SHARE) continue;
    const fn = view.functions.find(
      (f) => f.frame.name === site.frame.name && f.frame.file === site.frame.file && f.frame.line === site.frame.line,
    );
    if (fn) total += site.share * (fn.selfUs / view.activeUs);
  }
  return total;
}
