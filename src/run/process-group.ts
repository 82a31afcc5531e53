// The target runs in its own process group (spawned detached), so one signal reaches the
// launcher, the server and every worker it forked. These helpers signal the group and tell
// whether any member still runs; zombies (exited, not yet reaped by init) do not count.

import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is empty
  }
}

/** Live (non-zombie) members of a process group, from /proc on Linux. */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      // Fields after the parenthesised command name: state ppid pgrp ...
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') out.push(Number(e));
    } catch {
      /* exited while we looked */
    }
  }
  return out;
}

/** A live process's parent, process group and session ids (Linux: /proc). */
export interface ProcessIds {
  ppid: number;
  pgrp: number;
  session: number;
}

/**
 * The ids of a live (non-zombie) process, from /proc on Linux; undefined when it is gone or a
 * zombie. Elsewhere `{}` for a live process (its ids unknown), undefined when it is gone.
 */
export function processIds(pid: number): ProcessIds | Record<string, never> | undefined {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  if (process.platform !== 'linux') return {};
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid, pgrp, session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z' || state === 'X') return undefined;
    return { ppid: Number(ppid), pgrp: Number(pgrp), session: Number(session) };
  } catch {
    return undefined;
  }
}

export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  return process.platform !== 'linux' || groupMembers(pgid).length > 0;
}

/** Polls until the group is empty or `ms` pass; true when it emptied. */
export async function waitGroupGone(pgid: number, ms: number, pollMs = 25): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await sleep(pollMs);
  }
  return true;
}

/** SIGTERM to the group, then SIGKILL after `graceMs`. Resolves once the group is gone. */
export async function stopGroup(pgid: number, graceMs: number): Promise<'empty' | 'terminated' | 'killed'> {
  if (!groupAlive(pgid)) return 'empty';
  signalGroup(pgid, 'SIGTERM');
  if (await waitGroupGone(pgid, graceMs)) return 'terminated';
  signalGroup(pgid, 'SIGKILL');
  await waitGroupGone(pgid, 2000);
  return 'killed';
}
