// The end of a run, agent side: flush to every agent, then wait (bounded)
// until every thread confirmed its last telemetry with `bye`. A thread whose connections
// all closed has nothing more to say.

import { PROTOCOL_VERSION } from '../agent/protocol.js';
import type { AgentPeer, AgentServer } from './agent-server.js';
import { groupPeers } from './run-meta.js';

/** Resolves when `done(group)` holds for every thread group, or after `timeoutMs`. */
function waitForAll(server: AgentServer, done: (group: AgentPeer[]) => boolean, timeoutMs: number): Promise<boolean> {
  const check = () => [...groupPeers(server.peers).values()].every((g) => done(g) || g.every((p) => p.closed));
  if (check()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const events = ['profile', 'bye', 'disconnect'] as const;
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      for (const e of events) server.off(e, onEvent);
      resolve(ok);
    };
    const onEvent = () => {
      if (check()) finish(true);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    for (const e of events) server.on(e, onEvent);
  });
}

/**
 * Asks every agent to flush and waits until each thread has said bye. An agent says bye
 * only after the profiles it was asked to stop are written, so one wait covers both.
 */
export function collectAgents(server: AgentServer, timeoutMs: number): Promise<boolean> {
  server.broadcast({ v: PROTOCOL_VERSION, type: 'control', cmd: 'flush' });
  return waitForAll(server, (g) => g.some((p) => p.bye !== undefined), timeoutMs);
}
