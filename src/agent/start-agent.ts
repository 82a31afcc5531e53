// The agent itself (bundled to dist/agent/agent-core.cjs), loaded by the preload stub
// (preload.ts) where it should run. Reads its configuration, installs the growth hooks and
// starts this thread's agent. Never throws, never prints, installs no signal handler and
// never keeps the process alive.
import { isMainThread } from 'node:worker_threads';
import { join } from 'node:path';
import type * as net from 'node:net';
import { ENV } from './protocol.js';
import { readAgentConfig } from './agent-config.js';
import { useConnectionSecret } from './connection.js';
import { ThreadAgent } from './thread-agent.js';
import { addAgentFile } from './hooks/call-site.js';
import { createGrowthHooks } from './hooks/index.js';

const started = Symbol.for('hotpath.agent.started');

function clusterInfo(): { isPrimary: boolean; workerId?: number } {
  // In a cluster worker node:cluster is loaded before preloads; elsewhere it is not loaded for nothing.
  if (!isMainThread || !clusterLoaded()) return { isPrimary: false };
  const cluster = require('node:cluster') as typeof import('node:cluster').default;
  if (cluster.isWorker) return { isPrimary: false, workerId: cluster.worker?.id };
  // A process becomes a cluster primary only when it forks, after hello: see watchClusterFork.
  return { isPrimary: false };
}

/** A cluster worker has node:cluster loaded before preloads run; elsewhere it is not worth loading. */
function clusterLoaded(): boolean {
  const list = (process as unknown as { moduleLoadList?: string[] }).moduleLoadList;
  return list === undefined || list.includes('NativeModule cluster');
}

/**
 * Starts this thread's agent once. `listening`: the server whose listen made the stub start
 * the agent (a worker thread), which the agent's own listen detector has not seen.
 */
export function startAgent(listening?: net.Server): void {
  try {
    const socket = process.env[ENV.socket];
    const g = globalThis as Record<symbol, unknown>;
    if (!socket || g[started]) return;
    g[started] = true;
    for (const file of [__filename, join(__dirname, 'hotpath-agent.cjs'), join(__dirname, 'agent-worker.cjs')]) addAgentFile(file);
    const { config, problem } = readAgentConfig(process.env);
    useConnectionSecret(config.secret);
    const growth = config.hooks ? createGrowthHooks() : undefined;
    const agent = new ThreadAgent({
      socket,
      runDir: process.env[ENV.runDir] ?? process.cwd(),
      config,
      cluster: clusterInfo(),
      growth,
      agentDir: __dirname,
    });
    agent.start(problem, listening);
    growth?.install();
  } catch {
    // The agent must never break the program it is loaded into.
  }
}
