// The cluster part of report.json's telemetry (`telemetry.cluster`): requests per worker for
// every run whose target is a cluster, and the primary's own figures when it sent its stream.
// One line of it in the terminal and report.md (clusterLine).

import type { RunData } from '../run-dir/run-data.js';
import type { TelemetrySummary } from './report-schema.js';
import { workerSpread } from '../analyze/signals/worker-spread.js';
import { primaryLoad, primaryThreads } from '../analyze/signals/cluster-primary-load.js';
import { round } from '../analyze/signals/stats.js';

type ClusterSummary = NonNullable<TelemetrySummary['cluster']>;

const SCHED: Record<number, 'none' | 'rr'> = { 1: 'none', 2: 'rr' };

export function summarizeCluster(run: RunData): Pick<TelemetrySummary, 'cluster'> {
  const spread = workerSpread(run);
  if (spread === undefined) return {};
  const cluster: ClusterSummary = {
    workers: spread.workers.map((w) => ({
      workerId: w.workerId,
      pid: w.pid,
      requests: w.requests,
      connections: w.connections,
      share: round(w.share, 4),
    })),
    busiestOverEven: round(spread.busiestOverEven, 3),
    busiestOverQuietest: spread.busiestOverQuietest === null ? null : round(spread.busiestOverQuietest, 3),
  };
  const thread = primaryThreads(run)[0];
  const load = thread ? primaryLoad(run, thread) : undefined;
  if (load !== undefined) {
    const sched = load.schedulingPolicy !== undefined ? SCHED[load.schedulingPolicy] : undefined;
    cluster.primary = {
      pid: load.pid,
      ...(sched !== undefined ? { schedulingPolicy: sched } : {}),
      connectionsHandedOff: load.handedOff,
      connectionsPerSecond: round(load.rate, 1),
      coreShare: round(load.coreShare, 4),
      cpuPerConnectionUs: load.handedOff > 0 ? round(load.cpuUs / load.handedOff, 1) : null,
      utilizationMean: round(load.eluMean, 4),
      delayP99Ms: round(load.delayP99Ms, 3),
      heldSocketsPeak: load.heldPeak,
      heapUsedMaxBytes: load.heapUsedPeak,
    };
  }
  return { cluster };
}

/** `2 workers, requests 51 % / 49 % (1,020 / 980); primary 7 % of a core, 464 connections/s handed off`. */
export function clusterLine(c: ClusterSummary): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const shares = c.workers.map((w) => `${Math.round(w.share * 100)} %`).join(' / ');
  const counts = c.workers.map((w) => n(w.requests)).join(' / ');
  const even = c.busiestOverEven >= 1.1 ? `, busiest ${c.busiestOverEven.toFixed(2)}x an even share` : '';
  let line = `${c.workers.length} worker${c.workers.length === 1 ? '' : 's'}, requests ${shares} (${counts})${even}`;
  const p = c.primary;
  if (p !== undefined) {
    line +=
      `; primary ${Math.round(p.coreShare * 100)} % of a core, ${n(Math.round(p.connectionsPerSecond))} connections/s handed off` +
      `${p.schedulingPolicy !== undefined ? ` (scheduling ${p.schedulingPolicy})` : ''}`;
  }
  return line;
}
