// Requests per cluster worker over the load window: how evenly the cluster spread the load.
// Round-robin scheduling spreads connections evenly; SCHED_NONE leaves it to the kernel, which
// on Linux tends to wake the same few workers (docs/findings.md, HOTPATH_CLUSTER_PRIMARY).

import type { RunData } from '../../run-dir/run-data.js';
import { loadWindow, targetThreads, windowSamples } from './load-window.js';
import { sum } from './stats.js';

export interface WorkerShare {
  /** cluster.worker.id */
  workerId: number;
  pid: number;
  requests: number;
  /** New connections the worker accepted (or was handed). */
  connections: number;
  /** Share of the cluster's requests, 0..1. */
  share: number;
}

export interface WorkerSpread {
  workers: WorkerShare[];
  requests: number;
  /** The busiest worker's requests over the least busy one's (null when one served none). */
  busiestOverQuietest: number | null;
  /** The busiest worker's share over an even share (1 = perfectly even). */
  busiestOverEven: number;
}

/** Requests per worker of a cluster run; undefined when no cluster worker served. */
export function workerSpread(run: RunData): WorkerSpread | undefined {
  const w = loadWindow(run);
  const workers = run.threads.filter((t) => t.hello?.clusterWorkerId !== undefined && t.threadId === 0 && t.samples.length > 0);
  // Every worker that reported counts, one that served nothing too (it shows how uneven the spread was).
  const serving = new Set(targetThreads(run));
  if (workers.length === 0 || !workers.some((t) => serving.has(t))) return undefined;
  const rows = workers.map((t) => {
    const http = windowSamples(t, w)
      .map((s) => s.http)
      .filter((h) => h !== undefined);
    return {
      workerId: t.hello!.clusterWorkerId!,
      pid: t.pid,
      requests: sum(http.map((h) => h.finished)),
      connections: sum(http.map((h) => h.connections)),
    };
  });
  const requests = sum(rows.map((r) => r.requests));
  if (requests === 0) return undefined;
  const counts = rows.map((r) => r.requests);
  const busiest = Math.max(...counts);
  const quietest = Math.min(...counts);
  return {
    workers: rows.map((r) => ({ ...r, share: r.requests / requests })).sort((a, b) => a.workerId - b.workerId),
    requests,
    busiestOverQuietest: quietest > 0 ? busiest / quietest : null,
    busiestOverEven: busiest / (requests / rows.length),
  };
}
