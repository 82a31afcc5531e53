// Processes the run leaves behind. Stopping the target's process group stops everything it
// started, except what left the group: a child spawned with `detached: true` (a session and
// group of its own), or one put in a group of its own by job control (`set -m` in bash). hotpath
// knows every process whose agent said hello; after the target's group is stopped, any of them
// still running is a stray. One still in the target's session (which the target's spawn
// created, its id the target's pid) belongs to the run and is stopped like the group; one that
// left the session is the user's to stop: it is named (pid, command) in a warning.

import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentPeer } from './agent-server.js';
import { processIds } from './process-group.js';

export interface StrayProcess {
  pid: number;
  /** The command it runs, from its agent's hello (argv; the node binary by its name). */
  command: string;
  /** It is in the target's session (its group is another): part of the run, stopped with it. */
  inSession: boolean;
}

/** Agents' processes other than the target's group that still run after it was stopped. */
export function strayProcesses(peers: readonly AgentPeer[], targetPid: number): StrayProcess[] {
  const seen = new Map<number, AgentPeer>();
  for (const p of peers) if (p.hello && !seen.has(p.pid)) seen.set(p.pid, p);
  const out: StrayProcess[] = [];
  for (const [pid, peer] of seen) {
    if (pid === targetPid || pid === process.pid) continue;
    const ids = processIds(pid);
    if (ids === undefined) continue;
    // A member of the target's group is the group's business (stopGroup), not a stray.
    if ('pgrp' in ids && ids.pgrp === targetPid) continue;
    out.push({ pid, command: commandOf(peer), inSession: 'session' in ids && ids.session === targetPid });
  }
  return out.sort((a, b) => a.pid - b.pid);
}

function commandOf(peer: AgentPeer): string {
  const argv = peer.hello?.argv ?? [];
  if (argv.length === 0) return '(unknown command)';
  return [basename(argv[0]), ...argv.slice(1)].join(' ');
}

/** SIGTERM to each, SIGKILL to those still running after `graceMs`; how each one ended. */
export async function stopStrays(
  strays: readonly StrayProcess[],
  graceMs: number,
  pollMs = 25,
): Promise<Map<number, 'terminated' | 'killed'>> {
  const how = new Map<number, 'terminated' | 'killed'>();
  const signal = (pid: number, sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch {
      /* gone already */
    }
  };
  for (const s of strays) signal(s.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  let left = strays.filter((s) => processIds(s.pid) !== undefined);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(pollMs);
    left = left.filter((s) => processIds(s.pid) !== undefined);
  }
  for (const s of strays) how.set(s.pid, 'terminated');
  for (const s of left) {
    signal(s.pid, 'SIGKILL');
    how.set(s.pid, 'killed');
  }
  const killDeadline = Date.now() + 2000;
  while (left.some((s) => processIds(s.pid) !== undefined) && Date.now() < killDeadline) await sleep(pollMs);
  return how;
}

/** What meta.json and the terminal say about a stray. */
export function strayWarning(s: StrayProcess, stopped?: 'terminated' | 'killed'): string {
  const who = `pid ${s.pid} (\`${s.command}\`)`;
  if (stopped !== undefined) {
    return `${who} loaded the agent and still ran after the target's process group was stopped: it had left the group but not the target's session, so hotpath stopped it (${stopped === 'killed' ? 'SIGKILL after --grace' : 'SIGTERM'})`;
  }
  return `${who} loaded the agent and is still running after the run: it left the target's process group and session (spawned with \`detached: true\`, or setsid), so hotpath did not stop it. Stop it with \`kill ${s.pid}\` unless it is meant to outlive the server`;
}
