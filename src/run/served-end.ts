// The end of the driven server when a launcher outlives it. A watcher or process manager
// (nodemon, `node --watch`, pm2-runtime) is the process hotpath spawned, and the server is its
// child: when the child crashes, the launcher waits for a file change or starts another one, so
// the spawned process never exits and its exit (target-process.ts) never tells. Without this the
// load would go on against a closed port, and the run would read as the agent's failure. The
// served process's agent connection closes when it dies; once every process serving the driven
// address is gone, the run ends as if the target had ended, with the exit code the agent sent in
// its last `bye` (none when a signal killed it).

import type { ListenMessage } from '../agent/protocol.js';
import type { AgentPeer, AgentServer } from './agent-server.js';
import { processIds } from './process-group.js';
import type { ExitStatus } from './target-process.js';

/** The driven server's address, as the CLI told the agents (`target`). */
export interface ServedAddress {
  port?: number;
  pipe?: string;
}

export interface ServedEnd {
  /** The served process that ended last. */
  pid: number;
  /** Its command, from its agent's hello. */
  argv: string[];
  exit: ExitStatus;
}

/** How long a closed connection's process may take to be gone (its exit handlers run after the agent's). */
export const SERVED_GONE_WAIT_MS = 1000;
const POLL_MS = 25;

function atAddress(l: ListenMessage, address: ServedAddress): boolean {
  return address.pipe !== undefined ? l.pipe === address.pipe : l.port === address.port;
}

function serves(l: ListenMessage, address: ServedAddress): boolean {
  return l.clusterPrimary !== true && atAddress(l, address);
}

/** Whether a cluster primary whose agent is still connected holds the driven address. */
function primaryHolds(peers: readonly AgentPeer[], address: ServedAddress): boolean {
  return peers.some((p) => !p.closed && p.listens.some((l) => l.clusterPrimary === true && atAddress(l, address)));
}

/** The peers (threads) that listen on the driven address; a cluster primary's shared handle is not one. */
export function servingPeers(peers: readonly AgentPeer[], address: ServedAddress): AgentPeer[] {
  return peers.filter((p) => p.listens.some((l) => serves(l, address)));
}

/** How a process whose agent said goodbye ended: its exit code, or unknown (killed by a signal, no `bye`). */
export function exitOf(peers: readonly AgentPeer[], pid: number, at: number): ExitStatus {
  // The main thread's own connection says it (its agent worker has a connection of its own).
  const code = peers.find((p) => p.pid === pid && p.threadId === 0 && p.bye?.reason === 'exit')?.bye?.code;
  return { code: code ?? null, signal: null, at };
}

/**
 * Calls `onEnd` once, when every process that served the driven address is gone while the
 * process hotpath spawned (`spawnedPid`) was not one of them (its own exit says more). Returns
 * the function that stops watching.
 */
export function watchServedEnd(
  agents: AgentServer,
  address: ServedAddress,
  spawnedPid: number,
  onEnd: (end: ServedEnd) => void,
): () => void {
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const check = (deadline: number, at: number) => {
    timer = undefined;
    if (done) return;
    const serving = servingPeers(agents.peers, address);
    if (serving.length === 0 || serving.some((p) => !p.closed || p.pid === spawnedPid)) return;
    // A cluster primary still holding the address hands its connections to the next worker that
    // listens (a replacement it forks, or one that was slower to start): give it the wait.
    if (primaryHolds(agents.peers, address) && Date.now() < deadline) {
      timer = setTimeout(() => check(deadline, at), POLL_MS);
      return;
    }
    const alive = serving.filter((p) => processIds(p.pid) !== undefined);
    if (alive.length > 0) {
      // A thread's server that closed in a process that lives on is not this kind of end.
      if (Date.now() < deadline) timer = setTimeout(() => check(deadline, at), POLL_MS);
      return;
    }
    done = true;
    const last = serving.at(-1) as AgentPeer;
    onEnd({ pid: last.pid, argv: last.hello?.argv ?? [], exit: exitOf(agents.peers, last.pid, at) });
  };
  const onDisconnect = (peer: AgentPeer) => {
    if (done || timer !== undefined || !peer.listens.some((l) => serves(l, address))) return;
    check(Date.now() + SERVED_GONE_WAIT_MS, Date.now());
  };
  agents.on('disconnect', onDisconnect);
  return () => {
    done = true;
    if (timer !== undefined) clearTimeout(timer);
    agents.off('disconnect', onDisconnect);
  };
}
