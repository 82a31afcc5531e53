// A slot held across several waits: a request checks a connection out of a pool (or takes a lock)
// and then waits on more than one thing in turn before it gives the slot back, a transaction that
// runs its queries and calls a payment service in between (pg-pool's pending queue, a lease held
// across a remote call). No single wait site is then pinned at the pool's size (the holders move
// from one kind of wait to the next), so io-wait's queue rule, which reads one site at a time,
// finds no limit, and the finding named no code. What is seen instead: the wait sites that pass
// through one app function, together never more than a few in flight at a time while many more
// requests are, each made about once per request, and an `await` in that function before the
// first of them (where a request stood until a slot freed up, see slot-wait.ts).

import type { RunData } from '../../run-dir/run-data.js';
import type { CallSite } from '../../agent/protocol.js';
import type { OutgoingWait } from './outgoing-waits.js';
import { isAppSite } from './culprit.js';
import { slotWait, type SlotWait } from './slot-wait.js';

/**
 * A level of a site's calls in flight counts as reached when the site spent at least this share
 * of the window there: one stray moment at a higher level (a slot handed over while the last
 * answer's callback still ran) is no capacity.
 */
export const HELD_SLOT_LEVEL_MIN_SHARE = 0.01;

export interface HeldSlot {
  /** The app function that holds the slot, at the line of its first wait. */
  holder: CallSite;
  /** The wait sites made from it, longest waited first. */
  members: OutgoingWait[];
  /** Their waits in flight together (Little's law: time waited / window). */
  inFlight: number;
  /** The most calls of any one of them in flight at a time: the slots they share. */
  slots: number;
  /** Their waits per request, ms. */
  perRequestMs: number;
  waitsAt: SlotWait;
}

export interface HeldSlotLimits {
  /** Requests in flight per slot for a queue (io-wait's IO_WAIT_QUEUE_RATIO). */
  ratio: number;
  /** Calls per request each site must make (io-wait's IO_WAIT_QUEUE_MIN_PER_REQUEST). */
  minPerRequest: number;
}

interface Figures {
  requests: number;
  durationMs: number;
  inFlightMean: number;
  latencyP50Ms: number;
}

/**
 * The function requests queue to enter when they hold a slot across several waits, if the figures
 * show one: at least two wait sites below it, each made about once per request and never more
 * than `slots` in flight, while at least `ratio` times as many requests were in flight, and a
 * p50 at least `ratio` times their waits per request; and an `await` before its first wait.
 */
export function heldSlot(run: RunData, calls: readonly OutgoingWait[], s: Figures, limits: HeldSlotLimits): HeldSlot | undefined {
  if (s.requests <= 0 || s.durationMs <= 0) return undefined;
  const groups = new Map<string, { frame: CallSite; depth: number; members: Map<OutgoingWait, number> }>();
  for (const call of calls) {
    if (call.completed <= 0 || call.completed / s.requests < limits.minPerRequest) continue;
    const chain = [call.site, call.caller, ...(call.through ?? [])];
    chain.forEach((f, depth) => {
      if (!isAppSite(f) || f.functionLine === undefined) return;
      const key = `${f.file}:${f.functionLine}:${f.functionColumn ?? 0}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { frame: f, depth, members: new Map() }));
      g.depth = Math.min(g.depth, depth);
      // The line of its first wait on this path (a site's stack is that of one of its calls).
      g.members.set(call, Math.min(g.members.get(call) ?? f.line, f.line));
    });
  }
  // The nearest function that more than one wait site passes through, the most waited first.
  const shared = [...groups.values()]
    .filter((g) => g.members.size >= 2)
    .map((g) => ({ ...g, waitedMs: [...g.members.keys()].reduce((a, c) => a + c.totalMs, 0) }))
    .sort((a, b) => b.waitedMs - a.waitedMs || a.depth - b.depth);
  for (const g of shared) {
    const members = [...g.members.keys()].sort((a, b) => b.totalMs - a.totalMs);
    const levels = members.map((c) => topLevel(c.concurrencyMs, s.durationMs));
    // A site whose levels were not reported could have had any number in flight: no cap is shown.
    if (levels.some((l) => l < 1)) continue;
    const slots = Math.max(...levels);
    const inFlight = g.waitedMs / s.durationMs;
    const perRequestMs = g.waitedMs / s.requests;
    if (s.inFlightMean < limits.ratio * slots || s.latencyP50Ms < limits.ratio * perRequestMs) continue;
    const firstLine = Math.min(...g.members.values());
    const holder = { ...g.frame, line: firstLine };
    const waitsAt = slotWait(run, [holder]);
    if (waitsAt) return { holder, members, inFlight, slots, perRequestMs, waitsAt };
  }
  return undefined;
}

/** The highest level of calls in flight the site spent at least HELD_SLOT_LEVEL_MIN_SHARE of the window at; 0 without levels. */
export function topLevel(levelMs: readonly number[] | undefined, durationMs: number): number {
  if (!levelMs || durationMs <= 0) return 0;
  for (let level = levelMs.length - 1; level > 0; level--) if (levelMs[level] >= HELD_SLOT_LEVEL_MIN_SHARE * durationMs) return level;
  return 0;
}
