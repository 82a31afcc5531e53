// How work got onto the event loop: the Node core frame that called into the user's code above
// a sample. A process.nextTick callback sits directly under processTicksAndRejections (or
// runNextTicks), a promise continuation under runMicrotasks, a setImmediate callback under
// processImmediate, a timer's under listOnTimeout; anything else (a request, a socket event, a
// stream) is 'other'. Pure: reads a call tree only.

import type { CallTree, FrameKind } from './call-tree.js';
import { chargedTo } from './attribution.js';

export type EntryKind = 'nextTick' | 'promise' | 'immediate' | 'timer' | 'other';

const TASK_QUEUES = 'node:internal/process/task_queues';
const TIMERS = 'node:internal/timers';

/** The Node core frames that run queued callbacks, by file and function. */
const entries: { file: string; name: string; kind: EntryKind }[] = [
  { file: TASK_QUEUES, name: 'processTicksAndRejections', kind: 'nextTick' },
  { file: TASK_QUEUES, name: 'runNextTicks', kind: 'nextTick' },
  { file: TASK_QUEUES, name: 'runMicrotasks', kind: 'promise' },
  { file: '', name: 'runMicrotasks', kind: 'promise' },
  { file: TIMERS, name: 'processImmediate', kind: 'immediate' },
  { file: TIMERS, name: 'listOnTimeout', kind: 'timer' },
];

/** Frames walked through on the way up to the caller: the user's code and what it calls into. */
const userSide: ReadonlySet<FrameKind> = new Set(['app', 'deps', 'v8-builtin']);

export interface Entry {
  kind: EntryKind;
  /** The node of the callback the entry frame ran (the user's frame right under it), or -1. */
  callback: number;
}

/** How the work of `node` (an app or dependency node) was entered. */
export function entryOf(tree: CallTree, node: number): Entry {
  let callback = -1;
  for (let i = node; i > 0; i = tree.parent[i]) {
    const f = tree.frames[tree.frame[i]];
    if (userSide.has(f.kind)) {
      if (f.kind !== 'v8-builtin') callback = i;
      continue;
    }
    const entry = entries.find((e) => e.name === f.name && e.file === f.file);
    // Node's own queued work (afterWriteTick, emitCloseNT...) calls the user's listeners: an event.
    return { kind: entry && callback >= 0 && tree.parent[callback] === i ? entry.kind : 'other', callback };
  }
  return { kind: 'other', callback };
}

export interface EntryShare {
  kind: EntryKind;
  /** Attributed self time of the selected functions entered this way, in the tree's unit. */
  us: number;
  share: number;
  /** The callbacks entered this way (frame indexes), by time, largest first. */
  callbacks: { frame: number; us: number }[];
}

/**
 * How the attributed self time of the frames `selected` picks (say a culprit and the closures
 * written inside it) was entered, largest first; empty when they carry no time.
 */
export function entryShares(tree: CallTree, selected: (frameIndex: number) => boolean): EntryShare[] {
  const to = chargedTo(tree);
  const memo = new Map<number, Entry>();
  const byKind = new Map<EntryKind, { us: number; callbacks: Map<number, number> }>();
  let total = 0;
  for (let i = 1; i < tree.frame.length; i++) {
    const us = tree.self[i];
    if (us <= 0 || !selected(tree.frame[to[i]])) continue;
    const owner = to[i];
    let entry = memo.get(owner);
    if (!entry) memo.set(owner, (entry = entryOf(tree, owner)));
    const acc = byKind.get(entry.kind) ?? { us: 0, callbacks: new Map<number, number>() };
    byKind.set(entry.kind, acc);
    acc.us += us;
    if (entry.callback >= 0) {
      const frame = tree.frame[entry.callback];
      acc.callbacks.set(frame, (acc.callbacks.get(frame) ?? 0) + us);
    }
    total += us;
  }
  return [...byKind]
    .map(([kind, acc]) => ({
      kind,
      us: acc.us,
      share: total > 0 ? acc.us / total : 0,
      callbacks: [...acc.callbacks].map(([frame, us]) => ({ frame, us })).sort((a, b) => b.us - a.us),
    }))
    .sort((a, b) => b.us - a.us);
}
