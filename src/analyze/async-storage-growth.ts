// AsyncLocalStorage instances enabled per request (handler growth): a storage constructed in a
// middleware for each request and never disabled. Node keeps every enabled instance; on its
// async_hooks implementation (Node 20 and 22 by default) every new async resource walks them all
// to copy their stores, so each await costs more as requests go on, and none is ever freed. On
// AsyncContextFrame (Node 24+, or --experimental-async-context-frame) they are neither walked nor
// kept: then an info. Culprit: where the instances are first run (the app frame above a library).

import type { RunData, ThreadTelemetry } from '../run-dir/run-data.js';
import type { GrowthMessage } from '../agent/protocol.js';
import type { Finding } from './finding.js';
import { buildFinding, growthSeverity } from './build-finding.js';
import { targetThreads } from './signals/load-window.js';
import { growthStats, lastGrowth } from './signals/growth-series.js';
import { appCallers, siteCulprit } from './signals/culprit.js';
import { latencyTrend } from './signals/latency-trend.js';
import { round } from './signals/stats.js';
import { asyncStorageAdvice } from './handler-growth.advice.js';

/** Instances enabled after listen at one site before it is growth, not lazy setup. */
export const ASYNC_STORAGE_MIN_ENABLED = 10;
/** ...and at least this many per request served: one per request is the pattern. */
export const ASYNC_STORAGE_MIN_PER_REQUEST = 0.1;
/** Impact when latency does not (yet) show the cost. */
export const ASYNC_STORAGE_BASE_IMPACT = 0.05;

type StorageRow = NonNullable<GrowthMessage['asyncStorages']>[number];
const siteKey = (r: StorageRow) => (r.site ? `${r.site.file}:${r.site.line}:${r.site.column ?? 0}` : '?');

export function asyncStorageGrowth(run: RunData): Finding[] {
  const trend = latencyTrend(run);
  return targetThreads(run).flatMap((thread) => {
    const rows = lastGrowth(thread)?.asyncStorages ?? [];
    return rows.flatMap((row) => {
      const s = growthStats(thread, (m) => m.asyncStorages?.find((r) => siteKey(r) === siteKey(row))?.enabled ?? 0);
      if (row.enabled < ASYNC_STORAGE_MIN_ENABLED || !s || s.perRequest < ASYNC_STORAGE_MIN_PER_REQUEST) return [];
      return [finding(run, thread, row, s.perRequest, trend)];
    });
  });
}

/** Whether enabled instances are walked per async resource and kept (the async_hooks implementation). */
function walksStorages(thread: ThreadTelemetry): boolean {
  const hello = thread.hello;
  if (!hello) return true;
  if (hello.execArgv.some((a) => a.startsWith('--experimental-async-context-frame'))) return false;
  const major = Number(/^v?(\d+)/.exec(hello.nodeVersion)?.[1] ?? 0);
  return major > 0 && major < 24;
}

function finding(
  run: RunData,
  thread: ThreadTelemetry,
  row: StorageRow,
  perRequest: number,
  trend: ReturnType<typeof latencyTrend>,
): Finding {
  const at = appCallers(row)[0];
  const culprit = at ? siteCulprit(at, run.cwd) : undefined;
  const walked = walksStorages(thread);
  const where = culprit ? ` They are first run in \`${culprit.function}\` at ${culprit.file}:${culprit.line}.` : '';
  const cost = walked
    ? ` On this Node (${thread.hello?.nodeVersion ?? 'its async_hooks implementation'}) node keeps every enabled instance until \`disable()\` and each new promise, timer or socket walks them all to copy their stores: every await costs more as the requests go on, and the instances are never freed.`
    : ' On this Node (AsyncContextFrame) they are neither kept nor walked per async resource, so this costs little here; on Node 20 and 22 each one is kept and slows every await.';
  return buildFinding({
    code: 'HOTPATH_HANDLER_GROWTH',
    category: 'handler-growth',
    severity: walked ? growthSeverity(perRequest >= 0.5, trend) : 'info',
    title: 'A new AsyncLocalStorage is enabled for each request',
    summary: `${row.enabled} AsyncLocalStorage instances were enabled after the server started listening, ${round(perRequest, 2)} per request served.${cost}${where}`,
    evidence: {
      asyncLocalStorages: row.enabled,
      perRequest: round(perRequest, 3),
      walkedPerAsyncResource: walked,
      ...(thread.hello ? { nodeVersion: thread.hello.nodeVersion } : {}),
    },
    culprit,
    recommendation: asyncStorageAdvice,
    growth: { trend: walked ? trend : undefined, baseImpact: walked ? ASYNC_STORAGE_BASE_IMPACT : 0 },
  });
}
