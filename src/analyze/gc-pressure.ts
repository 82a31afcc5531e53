// GC pressure: the share of the load window spent in garbage collection, by kind, and the
// scavenge rate. Culprit: the app function allocating the most (sampling heap profile, with
// allocation inside dependencies charged to the nearest app frame). A --max-semi-space-size
// is suggested only when scavenges dominate and are frequent, with those figures as evidence.

import type { RunData } from '../run-dir/run-data.js';
import type { GcEvent } from '../agent/protocol.js';
import type { Finding } from './finding.js';
import { loadWindow, targetThreads, windowGc } from './signals/load-window.js';
import { allocationsOf, type AllocationSite } from './signals/heap-profile.js';
import { frameCulprit, describeCulprit } from './signals/culprit.js';
import { cpuViewOf } from './signals/cpu-profile.js';
import { round, sum } from './signals/stats.js';
import { allocationAdvice, heapProfileHint, semiSpaceAdvice } from './gc-pressure.advice.js';

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

export function gcPressure(run: RunData): Finding[] {
  const w = loadWindow(run);
  const threads = targetThreads(run);
  if (!w || threads.length === 0) return [];
  const events = threads.flatMap((t) => windowGc(t, w));
  const wallMs = w.durationMs * threads.length;
  const totalMs = sum(events.map((e) => e.durationMs));
  const share = totalMs / wallMs;
  if (share < GC_INFO_SHARE) return [];
  return [finding(run, events, share, totalMs, w.durationMs / 1000)];
}

function byKind(events: GcEvent[]): Record<string, { count: number; totalMs: number }> {
  const out: Record<string, { count: number; totalMs: number }> = {};
  for (const e of events) {
    const k = (out[e.kind] ??= { count: 0, totalMs: 0 });
    k.count++;
    k.totalMs = round(k.totalMs + e.durationMs, 2);
  }
  return out;
}

function finding(run: RunData, events: GcEvent[], share: number, totalMs: number, seconds: number): Finding {
  const kinds = byKind(events);
  const minor = kinds.minor ?? { count: 0, totalMs: 0 };
  const minorShare = totalMs > 0 ? minor.totalMs / totalMs : 0;
  const scavengesPerS = minor.count / seconds;
  const semiSpace = minorShare >= SEMI_SPACE_MIN_MINOR_SHARE && scavengesPerS >= SEMI_SPACE_MIN_SCAVENGES_PER_S;
  const alloc = allocationsOf(run);
  const top = alloc?.culprit && alloc.culprit.share >= ALLOCATION_CULPRIT_MIN_SHARE ? alloc.culprit : undefined;
  const culprit = top ? frameCulprit(top.frame, run.cwd) : undefined;
  const advice = [allocationAdvice(culprit ? `\`${culprit.function}\` (${culprit.file}:${culprit.line})` : undefined)];
  if (semiSpace) advice.push(semiSpaceAdvice(SEMI_SPACE_SUGGESTED_MIB));
  if (!alloc) advice.push(heapProfileHint);
  return {
    code: 'HOTPATH_GC_PRESSURE',
    category: 'gc-pressure',
    severity: share >= GC_CRITICAL_SHARE ? 'critical' : share >= GC_WARN_SHARE ? 'warning' : 'info',
    title: 'Garbage collection takes a large share of the time',
    summary: `GC ran ${events.length} times for ${round(totalMs, 0)} ms, ${round(share * 100, 1)} % of the load window` +
      ` (${round(minorShare * 100, 0)} % of it in scavenges, ${round(scavengesPerS, 1)} per second).` +
      (culprit ? ` The most allocating function is ${describeCulprit(culprit)} with ${round((top?.share ?? 0) * 100, 0)} % of sampled bytes.` : ''),
    evidence: {
      gcShare: round(share, 4), gcMs: round(totalMs, 1), gcCount: events.length, byKind: kinds,
      scavengesPerSecond: round(scavengesPerS, 2), minorShareOfGc: round(minorShare, 3),
      meanScavengeMs: minor.count > 0 ? round(minor.totalMs / minor.count, 3) : 0,
      ...(alloc ? { topAllocators: alloc.sites.slice(0, 5).map((s) => ({ function: s.frame.name, file: s.frame.file, line: s.frame.line, share: round(s.share, 3) })) } : {}),
      ...(semiSpace ? { suggestedSemiSpaceMiB: SEMI_SPACE_SUGGESTED_MIB } : {}),
    },
    ...(culprit ? { culprit } : {}),
    recommendation: advice.join('\n\n'),
    // The time this explains: collecting the garbage plus making it (the allocating functions'
    // CPU, weighted by their share of the bytes), so it ranks against a blocking finding that
    // names a neighbour of the allocator.
    impact: Math.min(1, share + (alloc ? allocatorCpuShare(run, alloc.sites) : 0)),
  };
}

/** Σ (share of sampled bytes × share of active CPU) over the app functions that allocate most. */
function allocatorCpuShare(run: RunData, sites: readonly AllocationSite[]): number {
  const view = cpuViewOf(run);
  if (!view || view.activeUs <= 0) return 0;
  let total = 0;
  for (const site of sites) {
    if (site.frame.kind !== 'app' || site.share < ALLOCATION_CULPRIT_MIN_SHARE) continue;
    const fn = view.functions.find((f) => f.frame.name === site.frame.name && f.frame.file === site.frame.file && f.frame.line === site.frame.line);
    if (fn) total += site.share * (fn.selfUs / view.activeUs);
  }
  return total;
}
