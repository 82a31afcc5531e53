// Entry of the in-process agent (bundled to dist/agent/hotpath-agent.cjs): the file
// NODE_OPTIONS="--require <abs path>" loads into every process and worker thread the target
// starts. It is deliberately tiny and loads the agent itself (agent-core.cjs, built from
// start-agent.ts) only where it will work, because loading it costs a fresh thread ≈ 4 ms
// (its bundle and the node modules it needs) and starting it as much again:
//  - without HOTPATH_SOCKET (not under `hotpath run`, or in the agent's own worker): nothing;
//  - on a main thread: at once, so the growth hooks are in place before the app's modules load;
//  - on a worker thread: when the thread listens, or once it has lived WORKER_START_DELAY_MS.
//    A worker started per request or per job ends before that and pays only this file: loaded
//    eagerly, the agent cost an app that starts a Worker per request a third of its throughput.
import { isMainThread } from 'node:worker_threads';
import { join } from 'node:path';
import type * as net from 'node:net';
import { ENV } from './protocol.js';
import { onServerListening } from './listen-detector.js';

/** A worker thread that lives this long without listening gets the agent anyway (a pool thread). */
export const WORKER_START_DELAY_MS = 500;

type StartAgent = (listening?: net.Server) => void;

function startAgent(listening?: net.Server): void {
  try {
    const core = require(join(__dirname, 'agent-core.cjs')) as { startAgent: StartAgent };
    core.startAgent(listening);
  } catch {
    // The agent must never break the program it is loaded into.
  }
}

/** Starts the agent at this worker thread's first listen, or after WORKER_START_DELAY_MS. */
function startLater(): void {
  const start = (listening?: net.Server): void => {
    stopWatching();
    clearTimeout(timer);
    startAgent(listening);
  };
  const stopWatching = onServerListening(start);
  const timer = setTimeout(() => start(), WORKER_START_DELAY_MS);
  timer.unref();
}

try {
  if (process.env[ENV.socket]) {
    if (isMainThread) startAgent();
    else startLater();
  }
} catch {
  // Never throws into the program.
}
