// Builds the CallTree from a V8 .cpuprofile: frames interned, classified and source-mapped;
// the same function under the same parent merged (optimized and unoptimized copies, split
// nodes); weights from samples + timeDeltas (sorted defensively, negatives clamped), never
// from the nominal interval; optionally restricted to a time window.
//
//   raw nodes (ids, children) ──▶ frame per raw node ──▶ weight per raw node (window)
//        ──▶ aggregated nodes keyed (parent, frame) ──▶ pre-order typed arrays

import type { CallTree, WorkKind } from './call-tree.js';
import type { CpuProfile } from './cpu-profile.js';
import { FrameTable } from './frame-table.js';
import { indexNodes, nodeIndex, type RawIndex } from './raw-index.js';
import { layoutTree } from './layout-tree.js';
import { SourceMapResolver } from './source-maps.js';
import { sampleWeights } from './sample-weights.js';
import { resolveWindow, type ProfileWindow } from './profile-window.js';
import { COMPILE_LABEL, inlineWorkOfLine, SEARCH_LABEL, type LineWork } from './work-kind.js';
import { compiledPerCall, freshFunctionCall } from './compiled-per-call.js';
import { otherCallsOnLine } from './line-calls.js';

export interface BuildCallTreeOptions {
  /** The target's working directory: app = under it and outside node_modules; paths relative to it. */
  cwd: string;
  /** Extra directories whose files are app code (monorepo packages outside cwd). */
  appRoots?: readonly string[];
  /** Apply source maps to app frames (default true). */
  sourceMaps?: boolean;
  /** Share one source-map cache across several profiles of the same run. */
  resolver?: SourceMapResolver;
  /** Count only samples inside this window. */
  window?: ProfileWindow;
}

/**
 * Lines longer than this hold no line-level work: a minified file (a dependency's dist bundle,
 * often one line) puts a whole module on one line, and the first `JSON.parse` in it says nothing
 * about where the ticks fell. Hand-written and formatted code stays far below it.
 */
export const INLINE_WORK_MAX_LINE_CHARS = 600;

/**
 * Share of a raw app or dependency node's self ticks that sit on lines calling frameless
 * builtins (JSON). A line that also calls one of the node's callees is left out: its ticks may
 * be the callee's, inlined (see line-calls.ts). Only nodes with ticks have positionTicks, so a
 * dependency's file is read only when one of its functions ran on the CPU.
 */
function inlineShares(
  profile: CpuProfile,
  raw: RawIndex,
  frames: FrameTable,
  rawFrame: Int32Array,
  resolver: SourceMapResolver | undefined,
) {
  const out = new Map<number, { work: WorkKind; label: string; share: number }[]>();
  if (!resolver) return out;
  profile.nodes.forEach((n, i) => {
    const gen = frames.generated[rawFrame[i]];
    if (!gen || !n.positionTicks?.length) return;
    let all = 0;
    let callees: Set<string> | undefined;
    const calleeNames = () => (callees ??= new Set(raw.children[i].map((c) => frames.frames[rawFrame[c]].name.split('.').pop()!)));
    // Callees built per call (compiled-per-call.ts): V8 compiles each at its first call, on the calling line.
    const fresh = compiledPerCall(raw.children[i].map((c) => profile.nodes[c].callFrame));
    const byLabel = new Map<string, { work: WorkKind; label: string; ticks: number }>();
    for (const { line, ticks } of n.positionTicks) {
      all += ticks;
      const text = resolver.sourceLine(gen.path, line);
      if (text === undefined || text.length > INLINE_WORK_MAX_LINE_CHARS) continue;
      const freshAt = fresh ? freshFunctionCall(text, calleeNames()) : -1;
      const w =
        freshAt >= 0
          ? { work: 'compile' as const, label: COMPILE_LABEL, at: freshAt }
          : lineWork(text, line === n.callFrame.lineNumber + 1 ? n.callFrame.columnNumber : -1, n.callFrame.functionName);
      if (!w) continue;
      if (freshAt < 0 && otherCallsOnLine(text, w.at).some((name) => calleeNames().has(name))) continue;
      const e = byLabel.get(w.label) ?? { ...w, ticks: 0 };
      e.ticks += ticks;
      byLabel.set(w.label, e);
    }
    if (all > 0 && byLabel.size > 0)
      out.set(
        i,
        [...byLabel.values()].map((e) => ({ work: e.work, label: e.label, share: e.ticks / all })),
      );
  });
  return out;
}

/**
 * Ticks per (frame, original line) of app and dependency frames. An app frame's generated line
 * maps through the source map at its first non-blank column; a frame without a map, and a
 * dependency's (whose frame keeps its file's lines), keeps its lines.
 */
function lineTicksOf(
  profile: CpuProfile,
  frames: FrameTable,
  rawFrame: Int32Array,
  resolver: SourceMapResolver | undefined,
): NonNullable<CallTree['lineTicks']> {
  const byKey = new Map<string, { frame: number; line: number; ticks: number }>();
  profile.nodes.forEach((n, i) => {
    const frame = rawFrame[i];
    const gen = frames.generated[frame];
    if (!gen || !n.positionTicks?.length) return;
    const mapped = gen.dependency !== true && resolver?.hasMap(gen.path) === true;
    for (const { line, ticks } of n.positionTicks) {
      let original = line;
      if (mapped) {
        const text = resolver!.sourceLine(gen.path, line) ?? '';
        original = resolver!.original(gen.path, line - 1, Math.max(0, text.search(/\S/)))?.line ?? 0;
      }
      if (original <= 0) continue;
      const key = `${frame}:${original}`;
      const e = byKey.get(key);
      if (e) e.ticks += ticks;
      else byKey.set(key, { frame, line: original, ticks });
    }
  });
  return [...byKey.values()];
}

/** A callback handed to a lookup (`list.some(`, `.find(`...): its time is the search's. */
const searchPredicate = /\.(some|find|findIndex|findLast|findLastIndex)\(\s*(async\s*)?$/;

/**
 * The frameless work on a line a function has ticks on. On the line the function starts on
 * (`start` ≥ 0, V8's column for it), only its own text counts (a comparator written after
 * `[...events].sort(` did not run the spread), and a function that is the predicate of a lookup
 * written just before it (`out.some((o) => ...)`) is doing that linear search.
 */
function lineWork(text: string, start: number, fn: string): LineWork | undefined {
  if (start < 0) return inlineWorkOfLine(text, fn);
  const from = Math.max(0, startOfFunction(text, start));
  const own = inlineWorkOfLine(text.slice(from), fn);
  if (own) return { ...own, at: own.at + from };
  const search = searchPredicate.exec(text.slice(0, from));
  return search ? { work: 'search', label: SEARCH_LABEL, at: search.index } : undefined;
}

/**
 * Where a function's text starts on its first line, from V8's position for it (the `(` of its
 * parameters, or an arrow's lone parameter): back over the name or `function` keyword is fine,
 * as neither holds work.
 */
function startOfFunction(line: string, column0: number): number {
  let i = Math.min(column0, line.length);
  while (i > 0 && /[\w$\s*]/.test(line[i - 1])) i--;
  return i;
}

/** Builds the aggregated call tree of a CPU profile. */
export function buildCallTree(profile: CpuProfile, options: BuildCallTreeOptions): CallTree {
  const resolver = options.sourceMaps === false ? undefined : (options.resolver ?? new SourceMapResolver());
  const frames = new FrameTable({ cwd: options.cwd, appRoots: options.appRoots, resolver });
  const raw = indexNodes(profile);
  const rawFrame = new Int32Array(raw.count);
  for (let i = 0; i < raw.count; i++) rawFrame[i] = i === raw.root ? 0 : frames.intern(profile.nodes[i].callFrame);

  const win = resolveWindow(profile, options.window);
  const weights = sampleWeights(profile);
  const rawSelf = new Float64Array(raw.count);
  let dropped = 0;
  let sampleCount = 0;
  for (let k = 0; k < weights.order.length; k++) {
    const s = weights.order[k];
    const t = weights.time[s];
    const node = nodeIndex(raw, profile.samples[s]);
    if (node === undefined || !raw.reachable[node] || t < win.filterStart || t >= win.filterEnd) {
      dropped++;
      continue;
    }
    rawSelf[node] += weights.weight[s];
    sampleCount++;
  }

  const tree = layoutTree(raw, rawFrame, rawSelf, frames.frames);
  const shares = inlineShares(profile, raw, frames, rawFrame, resolver);
  const inlineWork: NonNullable<CallTree['inlineWork']> = [];
  const byKey = new Map<string, { node: number; work: WorkKind; label: string; us: number }>();
  for (const [rawNode, list] of shares) {
    const node = tree.aggOf[rawNode];
    if (node < 0 || rawSelf[rawNode] === 0) continue;
    for (const { work, label, share } of list) {
      const key = `${node}:${label}`;
      let e = byKey.get(key);
      if (!e) {
        e = { node, work, label, us: 0 };
        byKey.set(key, e);
        inlineWork.push(e);
      }
      e.us += rawSelf[rawNode] * share;
    }
  }

  return {
    ...tree.arrays,
    frames: frames.frames,
    startUs: win.startUs,
    endUs: win.endUs,
    unit: 'us',
    sampleCount,
    dropped,
    inlineWork,
    lineTicks: lineTicksOf(profile, frames, rawFrame, resolver),
  };
}
