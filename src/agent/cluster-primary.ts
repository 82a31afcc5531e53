// Notices when this process becomes a cluster primary (it forks its first cluster worker),
// which is unknowable when the agent loads: the `child_process` channel (Node 20+) fires on
// every spawn, and once cluster lists a worker, the agent sends hello again with
// isClusterPrimary: true and starts the primary's own telemetry (collectors/primary-sampler.ts).
// The channel is published inside the spawn, so the stack there holds the app's cluster.fork().
import * as dc from 'node:diagnostics_channel';
import type { CallStack } from './protocol.js';
import { captureStack } from './hooks/call-site.js';

const CHANNEL = 'child_process';

export type ClusterModule = typeof import('node:cluster').default;

export function watchClusterFork(onPrimary: (cluster: ClusterModule, forkSite: CallStack) => void): void {
  let done = false;
  const handler = (): void => {
    let site: CallStack = [];
    try {
      // The app's frames above node's cluster and child_process internals (skipped by captureStack).
      site = captureStack(handler);
    } catch {
      // Best effort: no fork site.
    }
    // cluster registers the worker right after fork() returns: look on the next turn.
    setImmediate(() => {
      try {
        if (done) return;
        const cluster = require('node:cluster') as ClusterModule;
        if (!cluster.isPrimary || Object.keys(cluster.workers ?? {}).length === 0) return;
        done = true;
        dc.unsubscribe(CHANNEL, handler);
        onPrimary(cluster, site);
      } catch {
        // Best effort: hello keeps isClusterPrimary false.
      }
    }).unref();
  };
  dc.subscribe(CHANNEL, handler);
}
