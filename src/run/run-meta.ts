// Builds the parts of meta.json that come from what the agents said: the processes and
// threads seen (and which of them were targets), the profiles they wrote, and warnings.

import type { ListenMessage } from '../agent/protocol.js';
import type { RunMeta } from '../run-dir/schema.js';
import type { AgentPeer, AgentServer } from './agent-server.js';

/** One entry per (pid, threadId): an agent may use several connections for one thread. */
export function groupPeers(peers: readonly AgentPeer[]): Map<string, AgentPeer[]> {
  const byThread = new Map<string, AgentPeer[]>();
  for (const p of peers) {
    const key = `${p.pid}:${p.threadId}`;
    byThread.set(key, [...(byThread.get(key) ?? []), p]);
  }
  return byThread;
}

export const isHttpListen = (m: ListenMessage) => m.server?.kind === 'http' || m.server?.kind === 'https';

/**
 * A target serves what load was driven at: the driven port (cluster workers share it), or when
 * it is not known (a Unix socket, no load yet) an HTTP server. A helper server the app starts
 * on another port (an upstream stub in a child process, a metrics port) is not a target, even
 * when it answers as many requests as the target does (one per request it gets from it).
 */
export function isTargetGroup(group: readonly AgentPeer[], drivenPort: number | undefined): boolean {
  return group.some((p) => p.listens.some((l) => (drivenPort !== undefined ? l.port === drivenPort : isHttpListen(l))));
}

export function processesSeen(peers: readonly AgentPeer[], drivenPort?: number): RunMeta['processes'] {
  return [...groupPeers(peers).values()]
    .map((group) => {
      const hello = group.find((p) => p.hello)?.hello;
      return {
        pid: group[0].pid,
        threadId: group[0].threadId,
        ppid: hello?.ppid,
        argv: hello?.argv,
        isTarget: isTargetGroup(group, drivenPort),
        clusterWorkerId: hello?.clusterWorkerId,
        // A process is a cluster primary when cluster workers name it as their parent.
        isClusterPrimary:
          Boolean(hello?.isClusterPrimary) || peers.some((p) => p.hello?.clusterWorkerId !== undefined && p.hello.ppid === group[0].pid),
      };
    })
    .sort((a, b) => a.pid - b.pid || a.threadId - b.threadId);
}

export function profilesWritten(peers: readonly AgentPeer[]): RunMeta['profiles'] {
  const byFile = new Map<string, RunMeta['profiles'][number]>();
  for (const m of peers.flatMap((p) => p.profiles)) {
    byFile.set(m.file, { kind: m.kind, pid: m.pid, threadId: m.threadId, file: m.file, start: m.start, end: m.end });
  }
  return [...byFile.values()];
}

/** Ports the target listened on besides the driven one. */
export function otherPorts(peers: readonly AgentPeer[], driven: number | undefined): number[] {
  const ports = peers.flatMap((p) => p.listens.map((l) => l.port)).filter((p): p is number => p !== undefined && p !== driven);
  return [...new Set(ports)].sort((a, b) => a - b);
}

/** The process that listened on each port (the first one seen, for a port several shared). */
export function portOwners(peers: readonly AgentPeer[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const p of peers) for (const l of p.listens) if (l.port !== undefined && !out.has(l.port)) out.set(l.port, p.pid);
  return out;
}

/**
 * When the target opened more than one port and hotpath chose (no --port): which one the load
 * went to and how to drive another, since a helper server that opens first (an upstream stub, an
 * admin or metrics port) would otherwise take the load unnoticed. A port another process of the
 * target opened (a helper the app forked, which may have opened first: wait-for-listen.ts passes
 * over it) is said to be that process's, so the reason given for the choice stays true.
 */
export function otherPortsWarning(
  others: readonly number[],
  target: RunMeta['target'],
  portChosen: boolean,
  owners: ReadonlyMap<number, number> = new Map(),
): string | undefined {
  if (others.length === 0 || portChosen) return undefined;
  const driven = target?.port !== undefined ? `port ${target.port}` : (target?.url ?? 'the first server');
  const list = others.join(', ');
  // Ports another process of the target opened, and those processes.
  const elsewhere = others.filter((p) => target?.pid !== undefined && (owners.get(p) ?? target.pid) !== target.pid);
  const pids = new Set(elsewhere.map((p) => owners.get(p)));
  const opener = pids.size === 1 ? `process ${[...pids][0]}` : 'other processes';
  const why =
    elsewhere.length === 0
      ? 'the first HTTP server the app opened'
      : `the first HTTP server the app's own process opened (${elsewhere.length === 1 ? 'port' : 'ports'} ${elsewhere.join(', ')}: ${opener} of the target, such as a helper it started)`;
  return `the target also listened on port${others.length === 1 ? '' : 's'} ${list}; the load went to ${driven}, ${why}. Pass --port ${others[0]} to drive ${others.length === 1 ? 'that one' : 'another'}`;
}

/** Things about the agents worth telling the reader of the run. */
export function agentWarnings(server: AgentServer, drivenPort?: number): string[] {
  const out: string[] = [];
  if (server.versions.size > 0) out.push(`agents spoke protocol version ${[...server.versions].join(', ')}; this hotpath expects another`);
  if (server.malformed > 0) out.push(`${server.malformed} malformed line(s) from agents were skipped`);
  if (server.rejected > 0) {
    out.push(
      `${server.rejected} connection(s) to the agent socket did not present this run's secret and were dropped: ` +
        'another process tried to report as an agent; nothing it sent was recorded',
    );
  }
  for (const [key, group] of groupPeers(server.peers)) {
    if (isTargetGroup(group, drivenPort) && !group.some((p) => p.bye)) {
      const [pid, tid] = key.split(':');
      out.push(`the agent of pid ${pid} (thread ${tid}) did not confirm its last telemetry (no bye); the end of its data may be missing`);
    }
  }
  return out;
}
