// Notices when this process becomes a cluster primary (it forks its first cluster worker),
// which is unknowable when the agent loads: the `child_process` channel (Node 20+) fires on
// every spawn, and once cluster lists a worker, the agent sends hello again with
// isClusterPrimary: true.
import * as dc from 'node:diagnostics_channel';

const CHANNEL = 'child_process';

export function watchClusterFork(onPrimary: () => void): void {
  let done = false;
  const handler = (): void => {
    // cluster registers the worker right after fork() returns: look on the next turn.
    setImmediate(() => {
      try {
        if (done) return;
        const cluster = require('node:cluster') as typeof import('node:cluster').default;
        if (!cluster.isPrimary || Object.keys(cluster.workers ?? {}).length === 0) return;
        done = true;
        dc.unsubscribe(CHANNEL, handler);
        onPrimary();
      } catch {
        // Best effort: hello keeps isClusterPrimary false.
      }
    }).unref();
  };
  dc.subscribe(CHANNEL, handler);
}
