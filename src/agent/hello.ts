// The `hello` every process and thread sends when it loads the agent (wrappers included).
import { isMainThread } from 'node:worker_threads';
import type { HelloMessage } from './protocol.js';

type HelloBody = Omit<HelloMessage, 'v' | 'pid' | 'threadId' | 't'>;

export function buildHello(cluster: { isPrimary: boolean; workerId?: number }): HelloBody {
  const hello: HelloBody = {
    type: 'hello',
    ppid: process.ppid,
    argv: process.argv.slice(),
    execArgv: process.execArgv.slice(),
    cwd: process.cwd(),
    nodeVersion: process.version,
    isMainThread,
    isClusterPrimary: cluster.isPrimary,
  };
  if (cluster.workerId !== undefined) hello.clusterWorkerId = cluster.workerId;
  return hello;
}
