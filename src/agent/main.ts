// Entry of the in-process agent (bundled to dist/agent/hotpath-agent.cjs), preloaded into the
// target with NODE_OPTIONS="--require <abs path>". Without HOTPATH_SOCKET it does nothing. In
// the agent's own worker it does nothing either (that worker's env has no HOTPATH_SOCKET).
// Never throws, never prints, installs no signal handler and never keeps the process alive.
import { isMainThread } from 'node:worker_threads';
import { ENV } from './protocol.js';
import { readAgentConfig } from './agent-config.js';
import { ThreadAgent } from './thread-agent.js';
import { addAgentFile } from './hooks/call-site.js';
import { createGrowthHooks } from './hooks/index.js';
import { reportError } from './safe.js';

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

function main(): void {
  const socket = process.env[ENV.socket];
  const g = globalThis as Record<symbol, unknown>;
  if (!socket || g[started]) return;
  g[started] = true;
  addAgentFile(__filename);
  addAgentFile(require('node:path').join(__dirname, 'agent-worker.cjs'));
  const { config, problem } = readAgentConfig(process.env);
  const growth = config.hooks ? createGrowthHooks() : undefined;
  const agent = new ThreadAgent({
    socket, runDir: process.env[ENV.runDir] ?? process.cwd(), config, cluster: clusterInfo(), growth, agentDir: __dirname,
  });
  agent.start(problem);
  growth?.install(reportError);
}

try {
  main();
} catch {
  // The agent must never break the program it is loaded into.
}
