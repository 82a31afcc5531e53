// The figures `node --prof-process` prints, computed from resolved ticks by the same rules
// (each tick counts 1): the flat profile by the name of the top frame (shared libraries,
// JavaScript, C++), the summary, the C++ entry points and the bottom-up (heavy) profile.
// Rules kept from V8's tick processor so the two agree: bytecode handlers are left out of
// stacks (their time goes to the interpreted function), an unnamed top frame is "UNKNOWN"
// and counts as unaccounted, unnamed frames below the top are dropped, GC counts ticks in
// the GC VM state whatever code they are in. Unlike it, every tick in the node binary is
// named (it loses most of them, docs/prof.md), so "Unaccounted" is small.

import { VM_STATE, type EntryType, type ResolvedTicks } from './resolve-ticks.js';

export interface FlatRow {
  name: string;
  ticks: number;
  total: number;
  nonlib?: number;
}

export interface HeavyNode {
  name: string;
  ticks: number;
  parentShare: number;
  children: HeavyNode[];
}

export interface ProfStatistics {
  file: string;
  v8Version?: string;
  pid: number;
  ticks: number;
  unaccounted: number;
  excluded: number;
  sharedLibraries: FlatRow[];
  javascript: FlatRow[];
  cpp: FlatRow[];
  summary: { javascript: FlatRow; cpp: FlatRow; gc: FlatRow; sharedLibraries: FlatRow; unaccounted: FlatRow };
  cppEntryPoints: { name: string; ticks: number; cppShare: number; total: number }[];
  bottomUp: HeavyNode[];
  /** Why the unaccounted ticks could not be named. */
  unresolved: { reason: string; ticks: number }[];
  warnings: string[];
  deopts: { name: string; count: number; lastReason: string }[];
}

const UNKNOWN = 'UNKNOWN';
const CUTOFF_PCT = 1.0;
const CALL_GRAPH_DEPTH = 5;

/** Frames V8's tick processor leaves out of a stack by default. */
export const skippedEntry = (name: string): boolean => name.startsWith('BytecodeHandler: ');

/** A node of the bottom-up tree; names are numbered (`names` in computeProfStatistics). */
interface TreeNode {
  name: number;
  total: number;
  children: Map<number, TreeNode>;
}

/**
 * Each tick's name stack, top first, by V8's rules: calls `fn` with a reused array whose first
 * `length` entries are the stack (entry ids, -1 for an unnamed top).
 */
export function forEachNameStack(r: ResolvedTicks, fn: (stack: Int32Array, length: number, tick: number) => void): void {
  const skip = new Uint8Array(r.entries.length);
  for (let i = 0; i < skip.length; i++) if (skippedEntry(r.entries[i].name)) skip[i] = 1;
  const starts = r.frameStart;
  const frames = r.frames;
  let deepest = 0;
  for (let t = 0; t + 1 < starts.length; t++) deepest = Math.max(deepest, starts[t + 1] - starts[t]);
  const stack = new Int32Array(deepest);
  for (let t = 0; t + 1 < starts.length; t++) {
    let length = 0;
    const from = starts[t];
    const to = starts[t + 1];
    for (let i = from; i < to; i++) {
      const id = frames[i];
      if (id < 0) {
        if (i === from) stack[length++] = -1;
        continue;
      }
      if (skip[id] === 0) stack[length++] = id;
    }
    fn(stack, length, t);
  }
}

const byTicksThenName = <T extends { ticks: number; name: string }>(a: T, b: T) => b.ticks - a.ticks || (b.name < a.name ? -1 : 1);

export function computeProfStatistics(r: ResolvedTicks): ProfStatistics {
  const total = r.times.length;
  // Entries are counted by the name they print as (V8 groups rows and tree nodes by name):
  // names numbered once, so the per-tick work compares numbers, not strings.
  const names: string[] = [UNKNOWN];
  const numberOf = new Map<string, number>([[UNKNOWN, 0]]);
  const nameIds = new Int32Array(r.entries.length);
  for (let i = 0; i < r.entries.length; i++) {
    const name = r.entries[i].name;
    let k = numberOf.get(name);
    if (k === undefined) numberOf.set(name, (k = names.push(name) - 1));
    nameIds[i] = k;
  }
  const self = new Map<number, number>();
  const typeOf = new Map<number, EntryType | 'UNKNOWN'>();
  const cEntries = new Map<string, number>();
  const root: TreeNode = { name: -1, total: 0, children: new Map() };
  let unaccounted = 0;
  let gc = 0;
  for (const s of r.states) if (s === VM_STATE.GC) gc++;
  const nameOf = (id: number) => (id < 0 ? 0 : nameIds[id]);
  forEachNameStack(r, (stack, length, t) => {
    if (r.frameStart[t + 1] > r.frameStart[t] && r.frames[r.frameStart[t]] < 0) unaccounted++;
    // C++ entry point: the outermost of the C++ frames the stack starts with.
    const first = r.frameStart[t];
    const firstId = r.frames[first];
    if (firstId >= 0 && (r.entries[firstId].type === 'CPP' || r.entries[firstId].type === 'SHARED_LIB')) {
      let last = '';
      for (let i = first; i < r.frameStart[t + 1]; i++) {
        const id = r.frames[i];
        const cpp = id >= 0 && r.entries[id].type === 'CPP';
        if (cpp) last = r.entries[id].name;
        if (i > first && !cpp && last !== '') {
          cEntries.set(last, (cEntries.get(last) ?? 0) + 1);
          break;
        }
      }
    }
    if (length === 0) return;
    const top = nameOf(stack[0]);
    self.set(top, (self.get(top) ?? 0) + 1);
    if (!typeOf.has(top)) typeOf.set(top, stack[0] < 0 ? 'UNKNOWN' : r.entries[stack[0]].type);
    let node = root;
    root.total++;
    // The tree is printed CALL_GRAPH_DEPTH + 1 levels deep: deeper frames change no printed total.
    const depth = Math.min(length, CALL_GRAPH_DEPTH + 1);
    for (let j = 0; j < depth; j++) {
      const name = nameOf(stack[j]);
      let child = node.children.get(name);
      if (!child) node.children.set(name, (child = { name, total: 0, children: new Map() }));
      child.total++;
      node = child;
    }
  });
  const flat = [...self].map(([name, ticks]) => ({ id: name, name: names[name], ticks })).sort(byTicksThenName);
  const pct = (n: number, of: number) => (of > 0 ? (n * 100) / of : 0);
  const rows = (filter: (t: EntryType | 'UNKNOWN' | undefined) => boolean, nonlibOf?: number): FlatRow[] =>
    flat
      .filter((f) => filter(typeOf.get(f.id)))
      .map((f) => ({
        name: f.name,
        ticks: f.ticks,
        total: pct(f.ticks, total),
        ...(nonlibOf !== undefined ? { nonlib: pct(f.ticks, nonlibOf) } : {}),
      }));
  const sharedLibraries = rows((t) => t === 'SHARED_LIB');
  const libTicks = sharedLibraries.reduce((s, x) => s + x.ticks, 0);
  const nonlib = total - libTicks;
  const javascript = rows((t) => t === 'JS' || t === 'CODE', nonlib);
  const cpp = rows((t) => t === 'CPP', nonlib);
  const sum = (xs: FlatRow[]) => xs.reduce((s, x) => s + x.ticks, 0);
  const line = (name: string, ticks: number, withNonlib: boolean): FlatRow => ({
    name,
    ticks,
    total: pct(ticks, total),
    ...(withNonlib ? { nonlib: pct(ticks, nonlib) } : {}),
  });
  const cTotal = [...cEntries.values()].reduce((s, x) => s + x, 0);
  const cppEntryPoints = [...cEntries]
    .map(([name, ticks]) => ({ name, ticks }))
    .sort(byTicksThenName)
    .map((c) => ({ ...c, cppShare: pct(c.ticks, cTotal), total: pct(c.ticks, total) }));
  const heavy = (node: TreeNode, parentTotal: number, depth: number): HeavyNode[] =>
    [...node.children.values()]
      .map((c) => ({ c, share: pct(c.total, parentTotal) }))
      .filter((x) => x.share >= CUTOFF_PCT)
      .sort((a, b) => b.c.total - a.c.total || (names[b.c.name] < names[a.c.name] ? -1 : 1))
      .map(({ c, share }) => ({
        name: names[c.name],
        ticks: c.total,
        parentShare: share,
        children: depth < CALL_GRAPH_DEPTH ? heavy(c, c.total, depth + 1) : [],
      }));
  return {
    file: r.file,
    ...(r.v8Version ? { v8Version: r.v8Version } : {}),
    pid: r.pid,
    ticks: total,
    unaccounted,
    excluded: 0,
    sharedLibraries,
    javascript,
    cpp,
    summary: {
      javascript: line('JavaScript', sum(javascript), true),
      cpp: line('C++', sum(cpp), true),
      gc: line('GC', gc, true),
      sharedLibraries: line('Shared libraries', libTicks, false),
      unaccounted: line('Unaccounted', unaccounted, false),
    },
    cppEntryPoints,
    bottomUp: heavy(root, total, 0),
    unresolved: r.unresolved,
    warnings: r.warnings,
    deopts: r.deopts,
  };
}

function printLine(name: string, ticks: number, totalPct: number, nonlibPct: number | undefined): string {
  const nl = nonlibPct !== undefined ? `${nonlibPct.toFixed(1).padStart(5)}%  ` : '        ';
  return `  ${String(ticks).padStart(5)}  ${totalPct.toFixed(1).padStart(5)}%  ${nl}${name}`;
}

/** The text `node --prof-process` prints, section for section, then hotpath's own notes. */
export function formatProfStatistics(s: ProfStatistics, displayName = s.file): string {
  const out: string[] = [];
  out.push(`Statistical profiling result from ${displayName}, (${s.ticks} ticks, ${s.unaccounted} unaccounted, ${s.excluded} excluded).`);
  const header = (title: string) => out.push('', ` [${title}]:`, '   ticks  total  nonlib   name');
  header('Shared libraries');
  for (const r of s.sharedLibraries) out.push(printLine(r.name, r.ticks, r.total, undefined));
  header('JavaScript');
  for (const r of s.javascript) out.push(printLine(r.name, r.ticks, r.total, r.nonlib));
  header('C++');
  for (const r of s.cpp) out.push(printLine(r.name, r.ticks, r.total, r.nonlib));
  header('Summary');
  const sm = s.summary;
  for (const r of [sm.javascript, sm.cpp, sm.gc]) out.push(printLine(r.name, r.ticks, r.total, r.nonlib));
  out.push(printLine(sm.sharedLibraries.name, sm.sharedLibraries.ticks, sm.sharedLibraries.total, undefined));
  if (s.unaccounted > 0) out.push(printLine(sm.unaccounted.name, sm.unaccounted.ticks, sm.unaccounted.total, undefined));
  out.push('', ' [C++ entry points]:', '   ticks    cpp   total   name');
  for (const c of s.cppEntryPoints) out.push(printLine(c.name, c.ticks, c.cppShare, c.total));
  out.push(
    '',
    ' [Bottom up (heavy) profile]:',
    '  Note: percentage shows a share of a particular caller in the total',
    '  amount of its parent calls.',
    `  Callers occupying less than ${CUTOFF_PCT.toFixed(1)}% are not shown.`,
    '',
    '   ticks parent  name',
  );
  const walk = (nodes: HeavyNode[], indent: number) => {
    for (const n of nodes) {
      out.push(`  ${String(n.ticks).padStart(5)}  ${n.parentShare.toFixed(1).padStart(5)}%  ${' '.repeat(indent)}${n.name}`);
      walk(n.children, indent + 2);
      if (indent === 0) out.push('');
    }
  };
  walk(s.bottomUp, 0);
  if (s.unresolved.length > 0) {
    out.push(' [Unaccounted ticks] (hotpath):', '   ticks  total   why');
    for (const u of s.unresolved)
      out.push(`  ${String(u.ticks).padStart(5)}  ${((u.ticks * 100) / Math.max(1, s.ticks)).toFixed(1).padStart(5)}%   ${u.reason}`);
    out.push('');
  }
  if (s.deopts.length > 0) {
    out.push(' [Deoptimizations] (hotpath):', '   count   function (last reason)');
    for (const d of s.deopts.slice(0, 20))
      out.push(`  ${String(d.count).padStart(5)}    ${d.name}${d.lastReason ? ` (${d.lastReason})` : ''}`);
    out.push('');
  }
  return out.join('\n') + '\n';
}
