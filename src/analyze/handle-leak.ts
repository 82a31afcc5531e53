// Handle leak: handles the app opens and never closes (fs.watch watchers, sockets, child
// processes...), read from the active resources the agent samples (process.getActiveResourcesInfo()
// by type) and from its handle hook, which knows the creating call site and also sees unref'd
// handles, which the active resources do not list. Category memory-leak: resources held.

import type { GrowthMessage, SampleMessage } from '../agent/protocol.js';
import type { RunData, ThreadTelemetry } from '../run-dir/run-data.js';
import type { Culprit, Finding } from './finding.js';
import { buildFinding, growthSeverity } from './build-finding.js';
import { inFlightPeak, loadWindow, targetThreads, windowSamples, type Window } from './signals/load-window.js';
import { growthStats, lateShareServed, pointStats, windowGrowth, type GrowthStats } from './signals/growth-series.js';
import { outOfFds } from './signals/agent-errors.js';
import { appCallers, siteCulprit } from './signals/culprit.js';
import { mainClientCall, outgoingWaits } from './signals/outgoing-waits.js';
import { latencyTrend, type LatencyTrend } from './signals/latency-trend.js';
import { round } from './signals/stats.js';
import { handleKind, handleLeakAdvice } from './handle-leak.advice.js';

/** Handles added over the load window before it counts: a pool or a few lazily opened connections hold tens. */
export const HANDLE_LEAK_MIN_GROWTH = 100;
/** Growth must follow the requests or the clock closely (Pearson r), as for listeners and timers. */
export const HANDLE_LEAK_MIN_CORRELATION = 0.8;
/**
 * Share of the growth each half of the window must add: a leak climbs all along, whereas a pool
 * that filled up early is flat by the second half and a one-off batch (a reload opening a
 * thousand watchers at once) is a step, which a correlation alone can take for a trend (r 0.8
 * for a step 70 % into the window).
 */
export const HANDLE_LEAK_MIN_HALF_SHARE = 0.25;
/** Growth must exceed this many times the most requests in flight: one handle per request in flight is work, not a leak. */
export const HANDLE_LEAK_MIN_IN_FLIGHT_RATIO = 2;
/** Share of the growth still open at the end (after the load when the agent sampled it then): a leak keeps them. */
export const HANDLE_LEAK_MIN_KEPT = 0.5;
/** Samples in the window needed to judge a trend. */
export const HANDLE_LEAK_MIN_POINTS = 4;
/** One handle per this many requests or more: critical (the count only goes up while the server serves). */
export const HANDLE_LEAK_CRITICAL_PER_REQUEST = 0.1;
/** This many open handles that each hold a file descriptor: critical (a common `ulimit -n` is 1,024). */
export const HANDLE_LEAK_CRITICAL_FDS = 1000;
/** Share of the growth one hooked call site must hold to be named the culprit. */
export const HANDLE_LEAK_CULPRIT_MIN_SHARE = 0.5;
/**
 * Sockets an HTTP client connects from its own code (undici, behind the global fetch, connects
 * from its dispatcher: no app frame on the stack) are charged to the app's outgoing call site when
 * it made at least this share of the window's HTTP client calls, and at least as many calls as
 * sockets piled up: each kept socket served one of its calls (a fetch whose body is never read
 * keeps its connection until the Response is collected). outgoing-churn charges the sockets undici
 * connected in the window to the fetch call site by the same bar.
 */
export const HANDLE_LEAK_CLIENT_SITE_SHARE = 0.8;
/** Share of a Timeout growth the timer hook's pending timers must explain for timer-leak to own it. */
export const HANDLE_LEAK_TIMER_HOOK_SHARE = 0.5;
export const HANDLE_LEAK_BASE_IMPACT = 0.05;

/**
 * Resource types that are requests in flight (a read, a DNS lookup, a connect or a write under
 * way) or that come and go on their own (immediates): they end by themselves; a growing count of
 * them is a backlog, not something the app forgot to close.
 */
const IN_FLIGHT = /Req|Request|^(ConnectWrap|WriteWrap|ShutdownWrap|SendWrap|QueryWrap|Immediate|TCPConnectWrap|PipeConnectWrap)$/;

type HandleEntry = NonNullable<GrowthMessage['handles']>[number];

interface Trend {
  first: number;
  last: number;
  end: number;
  growth: number;
  perRequest: number;
  perSecond: number;
  requestCorrelation: number;
  timeCorrelation: number;
  lateShare: number;
}

interface Context {
  run: RunData;
  thread: ThreadTelemetry;
  w: Window | null;
  inFlightPeak: number;
  trend: LatencyTrend | undefined;
}

export function handleLeak(run: RunData): Finding[] {
  const w = loadWindow(run);
  const trend = latencyTrend(run);
  return targetThreads(run).flatMap((thread) => {
    const samples = windowSamples(thread, w);
    if (samples.length < HANDLE_LEAK_MIN_POINTS) return [];
    const ctx: Context = {
      run,
      thread,
      w,
      trend,
      inFlightPeak: inFlightPeak(thread, w),
    };
    const handles = lastHandles(thread, w);
    const out: Finding[] = [];
    const seen = new Set<string>();
    for (const type of resourceTypes(samples)) {
      const t = resourceTrend(ctx, samples, type);
      if (t === undefined || !isLeak(t, ctx) || (type === 'Timeout' && timerHookOwns(thread, w, t))) continue;
      seen.add(type);
      out.push(finding(ctx, type, t, siteFor(ctx, handles, type, t.growth)));
    }
    // Handles the active resources cannot show (unref'd ones), seen growing by the hook alone.
    for (const e of handles) {
      if (seen.has(e.resource)) continue;
      const t = hookTrend(ctx, e);
      if (t === undefined || !isLeak(t, ctx)) continue;
      seen.add(e.resource);
      out.push(finding(ctx, e.resource, t, { entry: e, stats: t }, true));
    }
    return out;
  });
}

function resourceTypes(samples: SampleMessage[]): string[] {
  const types = new Set<string>();
  for (const s of samples) for (const k of Object.keys(s.resources)) if (!IN_FLIGHT.test(k)) types.add(k);
  return [...types];
}

/** The connections the driven server accepted are sockets too (TCP, or pipes for a server on a Unix socket): not the app's to close. */
function inbound(thread: ThreadTelemetry, s: SampleMessage, type: string): number {
  const open = s.http?.openConnections ?? 0;
  if (open === 0) return 0;
  if (type === 'TCPSocketWrap' && thread.listens.some((l) => l.port !== undefined)) return open;
  if (type === 'PipeWrap' && thread.listens.some((l) => l.pipe !== undefined)) return open;
  return 0;
}

function resourceTrend(ctx: Context, samples: SampleMessage[], type: string): Trend | undefined {
  const value = (s: SampleMessage) => Math.max(0, (s.resources[type] ?? 0) - inbound(ctx.thread, s, type));
  const pts = samples.map((s) => ({ t: s.t, v: value(s) }));
  // The latest reading, after the load when the agent sampled then: a leak keeps its handles.
  const after = ctx.w ? ctx.thread.samples.findLast((s) => s.t > ctx.w!.end) : undefined;
  return trendOf(ctx, pts, after ? value(after) : (pts[pts.length - 1]?.v ?? 0));
}

/** The same judgement on one hooked call site's open handles (growth reports, about once a second). */
function hookTrend(ctx: Context, e: HandleEntry): Trend | undefined {
  const key = entryKey(e);
  const pts = ctx.thread.growth
    .map((m) => ({ t: m.t, v: m.handles?.find((x) => entryKey(x) === key)?.open }))
    .filter((p): p is { t: number; v: number } => p.v !== undefined && (!ctx.w || (p.t >= ctx.w.start && p.t <= ctx.w.end + 1000)));
  return trendOf(ctx, pts, pts[pts.length - 1]?.v ?? 0);
}

/**
 * The thread's growth stats over the readings (pointStats), with the reading at the end and the
 * late share of the rise in halves of the requests served, not of the clock (growth-series'
 * lateShareServed): a machine that slows in the second half serves fewer requests there, which
 * bends a share read in time though the handles follow every request.
 */
function trendOf(ctx: Context, pts: { t: number; v: number }[], end: number): Trend | undefined {
  if (pts.length < 3) return undefined;
  const s = pointStats(ctx.thread, pts)!;
  return {
    first: s.first,
    last: s.last,
    end,
    growth: s.delta,
    perRequest: s.perRequest,
    perSecond: round(s.perSecond, 2),
    requestCorrelation: s.requestCorrelation,
    timeCorrelation: s.timeCorrelation,
    lateShare: lateShareServed(ctx.thread, pts),
  };
}

function isLeak(t: Trend, ctx: Context): boolean {
  return (
    t.growth >= HANDLE_LEAK_MIN_GROWTH &&
    t.growth >= HANDLE_LEAK_MIN_IN_FLIGHT_RATIO * ctx.inFlightPeak &&
    Math.max(t.requestCorrelation, t.timeCorrelation) >= HANDLE_LEAK_MIN_CORRELATION &&
    t.lateShare >= HANDLE_LEAK_MIN_HALF_SHARE &&
    1 - t.lateShare >= HANDLE_LEAK_MIN_HALF_SHARE &&
    t.end - t.first >= HANDLE_LEAK_MIN_KEPT * t.growth
  );
}

/**
 * Timers the timer hook saw are timer-leak's: its pending timers (all sites, at the last report
 * of the window) explain at least half the Timeout growth. Left over: timers it cannot see
 * (hooks off, a library's own timer API).
 */
function timerHookOwns(thread: ThreadTelemetry, w: Window | null, t: Trend): boolean {
  const pending = (windowGrowth(thread, w)?.end.timers ?? []).reduce((a, x) => a + x.pending, 0);
  return pending >= HANDLE_LEAK_TIMER_HOOK_SHARE * t.growth;
}

function lastHandles(thread: ThreadTelemetry, w: Window | null): HandleEntry[] {
  return windowGrowth(thread, w)?.end.handles ?? [];
}

const entryKey = (e: HandleEntry) => `${e.api}\0${e.site ? `${e.site.file}:${e.site.line}:${e.site.column}` : '?'}`;

interface Site {
  entry: HandleEntry;
  stats: { growth: number };
}

/** The hooked call site whose open handles of this type grew the most, when it holds enough of the growth. */
function siteFor(ctx: Context, handles: HandleEntry[], type: string, growth: number): Site | undefined {
  let best: Site | undefined;
  for (const e of handles.filter((x) => x.resource === type)) {
    const s: GrowthStats | undefined = growthStats(ctx.thread, (m) => m.handles?.find((x) => entryKey(x) === entryKey(e))?.open);
    const g = s?.delta ?? 0;
    if (!best || g > best.stats.growth) best = { entry: e, stats: { growth: g } };
  }
  return best && best.stats.growth >= HANDLE_LEAK_CULPRIT_MIN_SHARE * growth ? best : undefined;
}

function culpritOf(ctx: Context, site: Site | undefined): Culprit | undefined {
  const app = site ? appCallers(site.entry)[0] : undefined;
  return app ? siteCulprit(app, ctx.run.cwd) : undefined;
}

/** The app's HTTP client call site that the sockets connected with no app frame served (see HANDLE_LEAK_CLIENT_SITE_SHARE). */
function clientSiteFor(
  ctx: Context,
  type: string,
  site: Site | undefined,
  growth: number,
): { culprit: Culprit; api: string; origin: string; calls: number } | undefined {
  if (type !== 'TCPSocketWrap' || (site !== undefined && appCallers(site.entry).length > 0)) return undefined;
  const top = mainClientCall(outgoingWaits(ctx.thread, ctx.w), HANDLE_LEAK_CLIENT_SITE_SHARE);
  if (!top?.site || top.started < growth) return undefined;
  return { culprit: siteCulprit(top.site, ctx.run.cwd), api: top.api, origin: top.origin, calls: top.started };
}

function finding(ctx: Context, type: string, t: Trend, site: Site | undefined, hookOnly = false): Finding {
  const kind = handleKind(type);
  const client = culpritOf(ctx, site) ? undefined : clientSiteFor(ctx, type, site, t.growth);
  const culprit = culpritOf(ctx, site) ?? client?.culprit;
  const e = site?.entry;
  const unref = e?.unref ?? 0;
  const unrefOnly = hookOnly && e !== undefined && unref >= HANDLE_LEAK_MIN_KEPT * e.open;
  const perRequest = t.perRequest >= HANDLE_LEAK_CRITICAL_PER_REQUEST;
  // The agent's own reads of /proc failed for want of a descriptor: the limit was reached in the run.
  const exhausted = kind.fd ? outOfFds(ctx.run)[0] : undefined;
  const fds = kind.fd && (t.end >= HANDLE_LEAK_CRITICAL_FDS || exhausted !== undefined);
  const where = client
    ? ` They were connected by the HTTP client for the ${client.api === 'fetch' ? 'fetch' : 'HTTP'} calls to ${client.origin} that \`${client.culprit.function}\` makes at ${client.culprit.file}:${client.culprit.line} (${client.calls} in the window): a connection its pool could not reuse, kept open.`
    : culprit
      ? ` Opened by \`${culprit.function}\` at ${culprit.file}:${culprit.line}${e ? ` (${e.api})` : ''}.`
      : '';
  const rate = t.perRequest > 0 ? `${round(t.perRequest, 2)} per request` : `${round(t.perSecond, 1)} per second`;
  const seenAs = hookOnly
    ? `Open ${kind.noun} made at one call site grew from ${t.first} to ${t.last} during the load (${rate})`
    : `Open ${kind.noun} (${type} in the active resources${type === 'TCPSocketWrap' || type === 'PipeWrap' ? ", the server's own connections left out" : ''}) grew from ${t.first} to ${t.last} during the load (${rate})`;
  const after = t.end !== t.last ? `; ${t.end} were still open after it` : '';
  const limit = exhausted
    ? ` The process ran out of file descriptors during the run (the agent's own read failed: ${exhausted.message}): from then on every new socket, file or connection fails.`
    : '';
  const hidden = unrefOnly
    ? ` They are unref'd, so \`process.getActiveResourcesInfo()\` does not list them; the agent's hook saw them.`
    : '';
  return buildFinding({
    code: 'HOTPATH_HANDLE_LEAK',
    category: 'memory-leak',
    severity: growthSeverity(perRequest || fds, ctx.trend),
    title: `${capitalize(kind.noun)} pile up without being closed`,
    summary: `${seenAs}${after}. Each holds ${kind.holds}.${where}${limit}${hidden}`,
    evidence: {
      resource: type,
      countAtStart: t.first,
      countAtEnd: t.last,
      countAfterLoad: t.end,
      growth: t.growth,
      perRequest: t.perRequest,
      perSecond: t.perSecond,
      requestCorrelation: t.requestCorrelation,
      timeCorrelation: t.timeCorrelation,
      inFlightPeak: ctx.inFlightPeak,
      ...(e ? { api: e.api, created: e.created, open: e.open, ...(unref > 0 ? { unref } : {}) } : {}),
      ...(hookOnly ? { seenBy: 'hook' } : {}),
      ...(client ? { connectedFor: { api: client.api, origin: client.origin, calls: client.calls } } : {}),
      ...(exhausted ? { outOfFileDescriptors: true } : {}),
    },
    culprit,
    recommendation: handleLeakAdvice(kind, unrefOnly, client?.api),
    growth: { trend: ctx.trend, baseImpact: HANDLE_LEAK_BASE_IMPACT },
  });
}

/** "TCP sockets", "Child processes..."; an API name stays as written ("fs.watch watchers"). */
const capitalize = (s: string) => (/^\w+\.\w/.test(s) ? s : s.charAt(0).toUpperCase() + s.slice(1));
