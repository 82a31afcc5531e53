// Turns one agent's telemetry (a process or worker thread) into the payload's columnar
// series, with times in seconds since the run started and values in display units
// (ms, %, MB), rounded so the embedded JSON stays small.

import type { ThreadTelemetry } from '../../run-dir/run-data.js';
import type { RunMeta } from '../../run-dir/schema.js';
import type { PayloadThread } from './report-payload.js';
import { windowStalls } from '../../analyze/signals/load-window.js';
import { gcActivity } from '../../analyze/signals/gc-activity.js';

/** Resource types charted on their own (the rest are only in the total). */
export const RESOURCE_TYPES_SHOWN = 4;
const MB = 1024 * 1024;

const r3 = (v: number): number => Math.round(v * 1000) / 1000;
const r1 = (v: number): number => Math.round(v * 10) / 10;

export function threadLabel(t: ThreadTelemetry, meta: RunMeta): string {
  const proc = meta.processes.find((p) => p.pid === t.pid && p.threadId === t.threadId);
  const who = t.threadId === 0 ? 'main thread' : `worker thread ${t.threadId}`;
  const role = [
    proc?.clusterWorkerId !== undefined ? `cluster worker ${proc.clusterWorkerId}` : '',
    proc?.isClusterPrimary || t.hello?.isClusterPrimary ? 'cluster primary' : '',
    t.listens.length ? `listening on ${t.listens.map((l) => l.pipe ?? `:${l.port ?? '?'}`).join(', ')}` : '',
  ].filter(Boolean);
  return `pid ${t.pid} ${who}${role.length ? ` (${role.join(', ')})` : ''}`;
}

/** `runStart`: epoch ms that the payload's times count from. */
export function threadPayload(t: ThreadTelemetry, meta: RunMeta, runStart = meta.startedAt): PayloadThread {
  const sec = (epochMs: number): number => r3((epochMs - runStart) / 1000);
  const s = t.samples;
  const totals = s.map((x) => Object.values(x.resources).reduce((a, b) => a + b, 0));
  return {
    pid: t.pid,
    threadId: t.threadId,
    label: threadLabel(t, meta),
    isTarget: t.listens.length > 0,
    t: s.map((x) => sec(x.t)),
    eldP50: s.map((x) => r3(x.eld.p50)),
    eldP99: s.map((x) => r3(x.eld.p99)),
    eldMax: s.map((x) => r3(x.eld.max)),
    elu: s.map((x) => r1(x.elu * 100)),
    cpu: s.map((x) => r1(((x.cpu.user + x.cpu.system) / 1000 / Math.max(1, x.intervalMs)) * 100)),
    rss: s.map((x) => r1(x.mem.rss / MB)),
    heapUsed: s.map((x) => r1(x.mem.heapUsed / MB)),
    heapTotal: s.map((x) => r1(x.mem.heapTotal / MB)),
    external: s.map((x) => r1(x.mem.external / MB)),
    resources: totals,
    resourcesByType: resourceColumns(t),
    httpRps: s.map((x) => (x.http ? r1(x.http.finished / (Math.max(1, x.intervalMs) / 1000)) : null)),
    httpP99: s.map((x) => (x.http && x.http.latency.count > 0 ? r3(x.http.latency.p99) : null)),
    openConnections: s.map((x) => x.http?.openConnections ?? null),
    gc: { t: t.gc.map((g) => sec(g.start)), ms: t.gc.map((g) => r3(g.durationMs)), kind: t.gc.map((g) => g.kind) },
    ...gcCoverage(t),
    stalls: stalls(t, sec),
  };
}

/** The share of the thread's time its GCs were observed, when the agent observed in windows. */
function gcCoverage(t: ThreadTelemetry): { gcCoverage?: number } {
  if (!t.samples.some((x) => x.gc !== undefined)) return {};
  return { gcCoverage: Math.round(gcActivity([t], null).coverage * 1000) / 1000 };
}

/** The busiest resource types (by their peak count), one column each. */
function resourceColumns(t: ThreadTelemetry): Record<string, number[]> {
  const peak = new Map<string, number>();
  for (const x of t.samples) for (const [k, v] of Object.entries(x.resources)) peak.set(k, Math.max(peak.get(k) ?? 0, v));
  const types = [...peak]
    .sort((a, b) => b[1] - a[1])
    .slice(0, RESOURCE_TYPES_SHOWN)
    .map(([k]) => k);
  return Object.fromEntries(types.map((k) => [k, t.samples.map((x) => x.resources[k] ?? 0)]));
}

/**
 * One entry per stall of the app (windowStalls keeps the final report of an ongoing stall and
 * leaves out the agent's own, stopping a profile, as in the analysis).
 */
function stalls(t: ThreadTelemetry, sec: (ms: number) => number): PayloadThread['stalls'] {
  const list = windowStalls(t, null).sort((a, b) => a.start - b.start);
  return { t: list.map((s) => sec(s.start)), ms: list.map((s) => r3(s.durationMs)) };
}
