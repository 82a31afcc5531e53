// Waits until the target is ready: an agent reports `listen` (on --port, when given).
// Ends early, with the target's output in the error, when the target exits first or the
// ready timeout passes; and on Ctrl-C (the abort signal).

import type { ListenMessage } from '../agent/protocol.js';
import { hotpathError } from '../errors.js';
import type { AgentPeer, AgentServer } from './agent-server.js';
import { launched } from './launcher.js';
import { isHttpListen } from './run-meta.js';
import type { TargetProcess } from './target-process.js';
import { describeExit } from './run-outcome.js';

export interface WaitForListenOptions {
  /** Only a server on this port counts. */
  port?: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface Listening {
  listen: ListenMessage;
  peer: AgentPeer;
}

/** How long a plain (non-HTTP) TCP server waits for an HTTP server to show up before it is chosen. */
export const NON_HTTP_SETTLE_MS = 500;

/**
 * How long an HTTP server opened by a helper process (a child the app forked or spawned, not a
 * cluster worker: an upstream stub, a mock service) waits for the app that started it to open
 * one of its own before it is chosen. Not waited when the parent is a launcher (see launched()):
 * `tsx app.ts` and `npm start` would otherwise start every run a second late.
 */
export const HELPER_SETTLE_MS = 1000;

/**
 * The server to drive: with --port, the one on that port; else the first HTTP server, passing
 * over a helper's (see HELPER_SETTLE_MS) while its parent may still open one; a plain TCP server
 * only when no HTTP server appeared within NON_HTTP_SETTLE_MS. A Unix socket counts only when it
 * serves HTTP: launchers such as tsx open IPC pipes of their own.
 */
export function chooseListen(server: Pick<AgentServer, 'peers'>, port: number | undefined, now = Date.now()): Listening | undefined {
  const all = server.peers.flatMap((peer) => peer.listens.map((listen) => ({ listen, peer })));
  if (port !== undefined) return all.find((x) => x.listen.port === port);
  const http = all.filter((x) => isHttpListen(x.listen) && (x.listen.port !== undefined || x.listen.pipe !== undefined));
  // The process that may still open the app's own server: a parent that is neither the cluster
  // primary of this worker nor a launcher that only started this child.
  const parentOf = (peer: AgentPeer) => {
    const hello = peer.hello;
    if (hello === undefined || hello.clusterWorkerId !== undefined || peer.threadId !== 0) return undefined;
    const parent = server.peers.find((p) => p.threadId === 0 && p.pid === hello.ppid);
    return parent?.hello && launched(parent.hello, hello) ? undefined : parent;
  };
  const own = http.find((x) => parentOf(x.peer) === undefined);
  if (own) return own;
  // Only helpers so far: the one that opened first, once its parent had time to open its own or is gone.
  const helper = http[0];
  if (helper) {
    const parent = parentOf(helper.peer);
    return parent && !parent.closed && now - helper.listen.t < HELPER_SETTLE_MS ? undefined : helper;
  }
  return all.find((x) => x.listen.port !== undefined && now - x.listen.t >= NON_HTTP_SETTLE_MS);
}

function withOutput(message: string, target: TargetProcess): string {
  const tail = target.outputTail(20);
  return tail.length === 0 ? `${message}\nIt printed nothing.` : `${message}\nIts last output:\n${tail.map((l) => `  │ ${l}`).join('\n')}`;
}

function portsSeen(server: AgentServer): number[] {
  return [...new Set(server.peers.flatMap((p) => p.listens.map((l) => l.port)).filter((p): p is number => p !== undefined))];
}

function timeoutError(server: AgentServer, target: TargetProcess, o: WaitForListenOptions): Error {
  const seconds = o.timeoutMs / 1000;
  const ports = portsSeen(server);
  let why: string;
  if (o.port !== undefined && ports.length > 0) why = `it listened on ${ports.join(', ')} but not on --port ${o.port}`;
  else if (server.peers.length === 0)
    why = 'no process loaded the hotpath agent (is it a Node.js program? does it drop NODE_OPTIONS from its environment?)';
  else why = `${server.peers.length} process(es) or thread(s) loaded the agent, none listened`;
  const stuck = stuckLoop(server);
  const advice = stuck ?? 'Raise --ready-timeout if it starts slowly.';
  return hotpathError(
    'HOTPATH_ERR_READY_TIMEOUT',
    withOutput(`The target did not start listening within ${seconds} s: ${why}. ${advice}`, target),
    { details: { readyTimeoutS: seconds, portsSeen: ports, agents: server.peers.length, output: target.outputTail(20) } },
  );
}

export function waitForListen(server: AgentServer, target: TargetProcess, o: WaitForListenOptions): Promise<Listening> {
  const found = chooseListen(server, o.port);
  if (found) return Promise.resolve(found);
  if (o.signal?.aborted) return Promise.reject(o.signal.reason);
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poll);
      server.off('listen', onListen);
      o.signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const onListen = () => {
      const chosen = chooseListen(server, o.port);
      if (chosen) settle(() => resolve(chosen));
    };
    // A plain TCP server is chosen after a settling delay: look again now and then.
    const poll = setInterval(onListen, 100);
    const onAbort = () => settle(() => reject(o.signal?.reason));
    const timer = setTimeout(() => settle(() => reject(timeoutError(server, target, o))), o.timeoutMs);
    server.on('listen', onListen);
    o.signal?.addEventListener('abort', onAbort, { once: true });
    void target.exited.then((status) => {
      // Give the agent's last messages a moment: a process can listen and die at once.
      setTimeout(
        () =>
          settle(() =>
            reject(
              hotpathError(
                'HOTPATH_ERR_TARGET_EXITED',
                withOutput(`The target ${describeExit(status)} before it started listening.`, target),
                { details: { exitCode: status.code, signal: status.signal, output: target.outputTail(20) } },
              ),
            ),
          ),
        50,
      );
    });
  });
}

/** A stall under way this long when the wait times out means a loop that never came back. */
export const READY_STUCK_STALL_MS = 1000;

/**
 * When a thread's event loop has been blocked without a break (its agent's watchdog keeps
 * reporting the stall), the target cannot listen, or cannot say it did: waiting longer will
 * not help. Says since when and for how long.
 */
function stuckLoop(server: AgentServer): string | undefined {
  const stalled = server.peers.filter(
    (p) => p.stall?.ongoing === true && p.stall.durationMs >= READY_STUCK_STALL_MS && p.stall.byAgent === undefined,
  );
  if (stalled.length === 0) return undefined;
  const p = stalled[0];
  const stall = p.stall as NonNullable<typeof p.stall>;
  return (
    `The event loop of pid ${p.pid}${p.threadId !== 0 ? ` (thread ${p.threadId})` : ''} has been blocked for ${(stall.durationMs / 1000).toFixed(1)} s without a break ` +
    '(an endless loop or a long synchronous job at start-up?): a blocked loop can neither listen nor report that it did, so a longer --ready-timeout will not help. ' +
    'Its stack is in telemetry.ndjson (`"type":"stall"`).'
  );
}
