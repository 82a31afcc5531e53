// Synchronous APIs on the request path: crypto, fs, zlib and child_process `*Sync` calls made
// while a request was in flight (from the agent's hooks), as a share of the loop's time.
// Culprit: the app call site that made them.

import type { RunData, ThreadTelemetry } from '../run-dir/run-data.js';
import type { GrowthMessage } from '../agent/protocol.js';
import type { Finding } from './finding.js';
import { buildFinding } from './build-finding.js';
import { loadWindow, targetThreads, type Window } from './signals/load-window.js';
import { isAppSite, siteCulprit } from './signals/culprit.js';
import { dependencyName } from '../profile/work-kind.js';
import { requestSeries, requestsAt } from './signals/request-series.js';
import { round } from './signals/stats.js';
import { moduleReloadAdvice, stdioStream, syncIoAdvice } from './sync-io.advice.js';
import { windowGrowth } from './signals/growth-series.js';
import type { CallSite } from '../agent/protocol.js';
import { runSourceLine } from '../profile/run-source-maps.js';
import { loopStats } from './signals/loop-stats.js';
import { syncCallCpuShare } from './signals/sync-call-cpu.js';

/**
 * Share of the loop's busy time (the load window × its utilization) spent inside one sync API
 * for it to be reported: a share of the work the loop did, which a slower or starved core does not
 * change (a share of the window does: beside a CPU hog, stdout-logging's writes held 8 % of its
 * loop's busy time both ways, 5 % of the window when the target got 0.64 cores, 1.7 % at 0.13).
 */
export const SYNC_IO_WARN_SHARE = 0.02;
/** Above this share the sync call is a main cause of latency. */
export const SYNC_IO_CRITICAL_SHARE = 0.2;
/** A single call this long is a visible stall for every request queued behind it. */
export const SYNC_IO_CRITICAL_CALL_MS = 20;

type SyncEntry = GrowthMessage['syncCalls'][number];

const key = (s: SyncEntry) => `${s.api} ${s.site?.file ?? ''}:${s.site?.line ?? 0}`;

export function syncIo(run: RunData): Finding[] {
  const w = loadWindow(run);
  const utilization = loopStats(run)?.eluMean ?? 1;
  return targetThreads(run).flatMap((thread) => {
    const window = inWindowTotals(thread, w);
    const durationMs = w?.durationMs ?? 0;
    if (durationMs <= 0) return [];
    return window
      .filter((x) => busyShare(x, durationMs, utilization) >= SYNC_IO_WARN_SHARE)
      .map((x) => finding(run, thread, x, durationMs, w, busyShare(x, durationMs, utilization)));
  });
}

/** The call's share of the loop's busy time, which is at least the time the loop spent in the call. */
export function busyShare(x: { totalMs: number }, durationMs: number, utilization: number): number {
  const busyMs = Math.max(durationMs * Math.min(1, utilization), x.totalMs);
  return busyMs > 0 ? Math.min(1, x.totalMs / busyMs) : 0;
}

interface WindowTotals {
  entry: SyncEntry;
  count: number;
  totalMs: number;
}

/** Cumulative totals turned into the load window's: last report minus the last one before the window. */
function inWindowTotals(thread: ThreadTelemetry, w: Window | null): WindowTotals[] {
  const bounds = windowGrowth(thread, w);
  if (!bounds) return [];
  const { before, end } = bounds;
  return end.syncCalls.map((entry) => {
    const prev = before?.syncCalls.find((p) => key(p) === key(entry));
    return { entry, count: entry.count - (prev?.count ?? 0), totalMs: entry.totalMs - (prev?.totalMs ?? 0) };
  });
}

/** `0.79 ms`, or `2 µs` below a hundredth of a millisecond. */
const perCall = (ms: number) => (ms < 0.01 ? `${round(ms * 1000, 1)} µs` : `${round(ms, 2)} ms`);

function finding(run: RunData, thread: ThreadTelemetry, x: WindowTotals, durationMs: number, w: Window | null, ofBusy: number): Finding {
  const share = Math.min(1, x.totalMs / durationMs);
  const perCallMs = x.count > 0 ? x.totalMs / x.count : 0;
  const series = requestSeries(thread);
  const requests = w ? requestsAt(series, w.end) - requestsAt(series, w.start) : (series.cumulative[series.cumulative.length - 1] ?? 0);
  // A library that makes the call (a logger's synchronous destination) is passed to the app frame that called it.
  const direct = x.entry.site;
  const appSite = isAppSite(direct) ? direct : x.entry.stack?.find((f) => isAppSite(f));
  const via =
    direct !== undefined && appSite !== direct && /[\\/]node_modules[\\/]/.test(direct.file)
      ? dependencyName(direct.file.replace(/\\/g, '/'))
      : undefined;
  const culprit = appSite ? siteCulprit(appSite, run.cwd) : undefined;
  const critical = share >= SYNC_IO_CRITICAL_SHARE || perCallMs >= SYNC_IO_CRITICAL_CALL_MS;
  const stream = stdioStream(x.entry.api);
  const reload = appSite !== undefined && x.entry.api.startsWith('fs.') && callsRequire(run, appSite);
  const where = culprit
    ? `, called from \`${culprit.function}\` at ${culprit.file}:${culprit.line}${via ? ` through ${via}` : ''}`
    : via
      ? `, called by ${via}`
      : '';
  // The loop pays for the code around the call too (a stream's machinery around each write):
  // ranked by the larger of the timed calls and the profile's share of that work under the culprit.
  const profiled = culprit ? syncCallCpuShare(run, x.entry.api, culprit) : undefined;
  const utilization = loopStats(run)?.eluMean ?? 1;
  const inRequire = reload
    ? " The reads are `require()`'s: the module is read, parsed and compiled again on every call, which happens only to a module deleted from `require.cache`."
    : '';
  return buildFinding({
    code: 'HOTPATH_SYNC_IO',
    category: 'sync-io',
    severity: critical ? 'critical' : 'warning',
    title: reload
      ? 'require() reloads a module on the request path, blocking the event loop'
      : `${stream ? `Synchronous writes to ${stream} block` : `${x.entry.api} blocks`} the event loop on the request path`,
    summary: `${x.entry.api} ran ${x.count} times while requests were in flight${where}, ${perCall(perCallMs)} per call: ${round(share * 100, 1)} % of the load window with the event loop blocked (${round(ofBusy * 100, 1)} % of its busy time).${inRequire}`,
    evidence: {
      api: x.entry.api,
      calls: x.count,
      totalMs: round(x.totalMs, 1),
      perCallMs: round(perCallMs, 3),
      shareOfWindow: round(share, 4),
      shareOfLoopBusy: round(ofBusy, 4),
      ...(requests > 0 ? { callsPerRequest: round(x.count / requests, 3) } : {}),
      ...(profiled !== undefined ? { profiledCpuShare: round(profiled, 3) } : {}),
      ...(via ? { via } : {}),
      ...(reload ? { reloadsModule: true } : {}),
    },
    culprit,
    recommendation: reload ? moduleReloadAdvice : syncIoAdvice(x.entry.api, via),
    impact: Math.max(share, Math.min(1, (profiled ?? 0) * Math.min(1, utilization))),
  });
}

/** Whether the app line that made the call is a `require(`: Node's module loader read the file. */
function callsRequire(run: RunData, site: CallSite): boolean {
  return /(?<![\w$.])require\s*\(/.test(runSourceLine(run, site.file, site.line) ?? '');
}
