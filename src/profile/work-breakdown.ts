// What a function's attributed time was spent on: its own JS, JSON, hashing, regex, zlib,
// fs, buffers, dependencies... so a finding can say "75% of this handler's time is SHA-512
// hashing and JSON serialization". The work of a charged sample is the most specific work
// found from its leaf up to the app frame it is charged to (leaf first), except that the
// sockets, streams and parsers an HTTP client frame (or a child process's spawn) runs are that
// client's work, and that a dependency's own code is the dependency's work, not that of the Node
// core frame that called it (body-parser's parse run from a stream's 'end' event is no 'events').

import type { CallTree, WorkKind } from './call-tree.js';
import { appOwners, chargedTo } from './attribution.js';
import { frameworkPackages } from './app-libraries.js';
import {
  dependencyName,
  genericWork,
  HTTP_CLIENT,
  HTTP_CLIENT_PLUMBING,
  PLUMBING_OWNERS,
  specificWork,
  type WorkLabel,
} from './work-kind.js';

export interface WorkItem {
  work: WorkKind;
  label: string;
  /** In the tree's unit (µs for CPU). */
  us: number;
  /** Share of the function's attributed self time, 0..1. */
  share: number;
}

export interface WorkBreakdown {
  /** The function's attributed self time, in the tree's unit. */
  totalUs: number;
  /** Largest first. */
  items: WorkItem[];
}

/** Per node, the work its self time was doing (leaf first, up to the nearest app frame). */
export function nodeWork(tree: CallTree): WorkLabel[] {
  const n = tree.frame.length;
  const out: WorkLabel[] = new Array(n);
  const specific: (WorkLabel | undefined)[] = new Array(n);
  // Classify each frame once (a tree has many more nodes than frames).
  const ofFrame = tree.frames.map((fr) => (fr.kind === 'app' ? undefined : specificWork(fr)));
  const clients = httpClientPackages(tree, ofFrame);
  tree.frames.forEach((fr, f) => {
    const pkg = fr.kind === 'deps' ? dependencyName(fr.file) : undefined;
    if (pkg !== undefined && ofFrame[f] === undefined && clients.has(pkg))
      ofFrame[f] = { work: 'http-client', label: `${HTTP_CLIENT} (${pkg})` };
  });
  const generic = tree.frames.map((fr) => genericWork(fr));
  for (let i = 0; i < n; i++) {
    const f = tree.frame[i];
    const p = tree.parent[i];
    const kind = tree.frames[f].kind;
    const inherited = p > 0 && tree.frames[tree.frame[p]].kind !== 'app' ? specific[p] : undefined;
    const own = ofFrame[f];
    const plumbing =
      inherited !== undefined && PLUMBING_OWNERS.has(inherited.work) && (own === undefined || HTTP_CLIENT_PLUMBING.has(own.work));
    // The stream a synchronous zlib call builds (its Gzip, under zlibBufferSync) is that call's compression.
    const syncZlib = inherited?.work === 'zlib' && own?.work === 'zlib-async';
    specific[i] = kind === 'app' ? undefined : plumbing || syncZlib ? inherited : kind === 'deps' ? own : (own ?? inherited);
    out[i] = specific[i] ?? generic[f];
  }
  return out;
}

/**
 * Dependencies the app calls to make its HTTP requests (axios, got, a cloud SDK): packages whose
 * frames called Node's HTTP client or undici with no app frame between, and that never called the
 * app (a framework calls the handlers, a proxy middleware called by the router still calls none).
 * Their own code (building the config, the headers, the interceptor chain) is issuing the request
 * like `http.request`'s: every request that needs the upstream pays it, and the plumbing under it
 * is theirs too. A healthy Fastify route making one axios call per request to a 2 ms upstream spent
 * 55 % of its handler's time in axios and 22 % in node's client (probe round z, beside two spinning
 * processes), which read as work the handler chose (event-loop-blocking, a false alarm).
 */
export function httpClientPackages(tree: CallTree, ofFrame: (WorkLabel | undefined)[]): Set<string> {
  const callers = new Set<string>();
  const frameOf = (i: number) => tree.frames[tree.frame[i]];
  for (let i = 1; i < tree.frame.length; i++) {
    const p = tree.parent[i];
    if (
      frameOf(i).kind === 'app' ||
      ofFrame[tree.frame[i]]?.work !== 'http-client' ||
      (p > 0 && ofFrame[tree.frame[p]]?.work === 'http-client')
    )
      continue;
    for (let a = p; a > 0 && frameOf(a).kind !== 'app'; a = tree.parent[a]) {
      if (frameOf(a).kind === 'deps') callers.add(dependencyName(frameOf(a).file));
    }
  }
  for (const pkg of frameworkPackages(tree)) callers.delete(pkg);
  return callers;
}

function add(acc: Map<string, WorkItem>, w: WorkLabel, us: number) {
  if (us <= 0) return;
  const e = acc.get(w.label);
  if (e) e.us += us;
  else acc.set(w.label, { work: w.work, label: w.label, us, share: 0 });
}

interface TreeWork {
  to: Int32Array;
  work: WorkLabel[];
  inline: Map<number, { work: WorkKind; label: string; us: number }[]>;
}

/** Per-tree work data, computed once: analyzers ask for several functions of the same tree. */
const cache = new WeakMap<CallTree, TreeWork>();

function treeWork(tree: CallTree): TreeWork {
  let tw = cache.get(tree);
  if (!tw) {
    const inline = new Map<number, { work: WorkKind; label: string; us: number }[]>();
    for (const e of tree.inlineWork ?? []) inline.set(e.node, [...(inline.get(e.node) ?? []), e]);
    tw = { to: chargedTo(tree, appOwners(tree)), work: nodeWork(tree), inline };
    cache.set(tree, tw);
  }
  return tw;
}

/** The breakdown of one function's (frame index) attributed self time, over all its nodes. */
export function workBreakdown(tree: CallTree, frameIndex: number): WorkBreakdown {
  const { to, work, inline } = treeWork(tree);
  const acc = new Map<string, WorkItem>();
  for (let i = 1; i < tree.frame.length; i++) {
    if (tree.frame[to[i]] !== frameIndex || tree.self[i] <= 0) continue;
    let us = tree.self[i];
    // A dependency's frameless work (JSON.parse on its line) goes with it to the app frame it is charged to.
    for (const e of inline.get(i) ?? []) {
      add(acc, e, e.us);
      us -= e.us;
    }
    add(acc, work[i], us);
  }
  const items = [...acc.values()].sort((a, b) => b.us - a.us);
  const totalUs = items.reduce((s, e) => s + e.us, 0);
  for (const e of items) e.share = totalUs > 0 ? e.us / totalUs : 0;
  return { totalUs, items };
}

/** Time per work kind over the whole tree (for "JSON work as a share of CPU"), charged or not. */
export function workTotals(tree: CallTree): Map<WorkKind, number> {
  const work = nodeWork(tree);
  const out = new Map<WorkKind, number>();
  const inlineByNode = new Float64Array(tree.frame.length);
  for (const e of tree.inlineWork ?? []) {
    out.set(e.work, (out.get(e.work) ?? 0) + e.us);
    inlineByNode[e.node] += e.us;
  }
  for (let i = 1; i < tree.frame.length; i++) {
    const us = tree.self[i] - inlineByNode[i];
    if (us > 0) out.set(work[i].work, (out.get(work[i].work) ?? 0) + us);
  }
  return out;
}

export interface WorkCaller {
  /** Frame index of the function the work is charged to (an app function, or the frame itself without one). */
  frame: number;
  us: number;
  /** Share of all the work of this kind, 0..1. */
  share: number;
}

/** Who asked for one kind of work ("JSON serialization, by app caller"), largest first. */
export function callersOfWork(tree: CallTree, kind: WorkKind): WorkCaller[] {
  const { to, work, inline } = treeWork(tree);
  const byFrame = new Map<number, number>();
  const add = (frame: number, us: number) => {
    if (us > 0) byFrame.set(frame, (byFrame.get(frame) ?? 0) + us);
  };
  for (let i = 1; i < tree.frame.length; i++) {
    let own = tree.self[i];
    for (const e of inline.get(i) ?? []) {
      own -= e.us;
      if (e.work === kind) add(tree.frame[to[i]], e.us);
    }
    if (work[i].work === kind) add(tree.frame[to[i]], own);
  }
  const total = [...byFrame.values()].reduce((a, b) => a + b, 0);
  return [...byFrame].map(([frame, us]) => ({ frame, us, share: total > 0 ? us / total : 0 })).sort((a, b) => b.us - a.us);
}

/** One kind of work over the whole tree, with where it ran: for work no app function asked for. */
export interface WorkPlace {
  work: WorkKind;
  label: string;
  /** In the tree's unit. */
  us: number;
  /** The part of it run with no app frame on the stack (charged to no app function). */
  unownedUs: number;
  /** The frames whose self time it was (a `RegExp:` frame; a dependency's function for its inline JSON.parse), largest first. */
  frames: { frame: number; us: number }[];
  /** The nearest frame with a source file at or above those (the dependency or app function that ran it), largest first. */
  sources: { frame: number; us: number }[];
}

const bump = (m: Map<number, number>, k: number, us: number) => m.set(k, (m.get(k) ?? 0) + us);
const ranked = (m: Map<number, number>) => [...m].map(([frame, us]) => ({ frame, us })).sort((a, b) => b.us - a.us);

const places = new WeakMap<CallTree, WorkPlace[]>();

/** Every work label of the tree with where it ran, largest first (computed once per tree). */
export function workPlaces(tree: CallTree): WorkPlace[] {
  let out = places.get(tree);
  if (!out) places.set(tree, (out = computePlaces(tree)));
  return out;
}

function computePlaces(tree: CallTree): WorkPlace[] {
  const { to, work, inline } = treeWork(tree);
  const n = tree.frame.length;
  // The nearest node at or above each with a source file (eval'd code and natives have none).
  const source = new Int32Array(n).fill(-1);
  for (let i = 1; i < n; i++) {
    const f = tree.frames[tree.frame[i]];
    source[i] = (f.kind === 'app' || f.kind === 'deps') && f.file !== '' ? i : source[tree.parent[i]];
  }
  const acc = new Map<
    string,
    { work: WorkKind; label: string; us: number; unownedUs: number; frames: Map<number, number>; sources: Map<number, number> }
  >();
  const add = (i: number, w: WorkLabel, us: number) => {
    if (us <= 0) return;
    let e = acc.get(w.label);
    if (!e) acc.set(w.label, (e = { work: w.work, label: w.label, us: 0, unownedUs: 0, frames: new Map(), sources: new Map() }));
    e.us += us;
    if (tree.frames[tree.frame[to[i]]].kind !== 'app') e.unownedUs += us;
    bump(e.frames, tree.frame[i], us);
    if (source[i] >= 0) bump(e.sources, tree.frame[source[i]], us);
  };
  for (let i = 1; i < n; i++) {
    let us = tree.self[i];
    if (us <= 0) continue;
    for (const e of inline.get(i) ?? []) {
      add(i, e, e.us);
      us -= e.us;
    }
    add(i, work[i], us);
  }
  return [...acc.values()].map((e) => ({ ...e, frames: ranked(e.frames), sources: ranked(e.sources) })).sort((a, b) => b.us - a.us);
}
