// The inspector's JS stacks beside perf's, by time: what `hotpath run --native` gives a perf
// sample from the inspector CPU profile recorded at the same time (its samples are on the same
// CLOCK_MONOTONIC µs as `perf record -k mono`).
//
// perf's map names a piece of optimized code by its outermost function only: a callee V8
// inlined into it (compressBody into the request handler) is not on perf's stack, and perf has
// no source line. V8's own profiler walks the inlining of optimized code, so its stack at the
// same moment has the callee, and its node's positionTicks say on which lines the function ran.
// For one perf sample, the inspector sample nearest in time (within one inspector interval) whose
// JS frames agree with perf's is taken: perf's JS frames, outermost first, are a subsequence of
// the inspector's (same script, line and column). Then
//  - the inspector frames between two of perf's JS frames are inserted after the first of them
//    when it is optimized code (`*` TurboFan, `+` Maglev in the perf map): its inlined callees;
//    under interpreted or baseline code, which inlines nothing, such frames mean the two stacks
//    are not of the same moment and nothing is inserted;
//  - the innermost JS frame, when it is the inspector sample's innermost JS frame too, gets one
//    of the lines of the sample's node (a native callee's lines are its JS caller's call site),
//    the node's positionTicks spread over the perf samples that take it in proportion.
// Otherwise perf's own frames stay as they are. perf's native frames (libuv, V8's C++, zlib, the
// kernel) are never replaced.

import type { CpuCallFrame, CpuProfile } from '../profile/cpu-profile.js';
import { indexNodes } from '../profile/raw-index.js';

const frameKey = (f: CpuCallFrame) => `${f.url}\u0000${f.lineNumber}\u0000${f.columnNumber}`;

/** A perf frame is JS when it came from the perf map (perfCallFrame marks it scriptId '1'). */
export const isPerfJs = (f: CpuCallFrame) => f.scriptId === '1';

/** What enrich() did to one sample. */
export interface Enriched {
  /** Leaf first, as perf gives them. */
  frames: CpuCallFrame[];
  /** The source line (1-based) of frames[line.index], when the inspector knew it. */
  line?: { index: number; line: number };
  /** Frames inserted from the inspector (inlined callees). */
  inserted: number;
  /** An inspector sample was near enough and agreed with perf's JS frames. */
  matched: boolean;
}

/** Golden-ratio steps: the k-th sample of a node picks its line evenly across the node's ticks. */
const PHI = 0.6180339887498949;

export class InspectorStacks {
  private readonly times: Float64Array;
  private readonly leafOf: Int32Array;
  /** Per node index: its JS frames outermost first (computed once, on first use). */
  private readonly stacks = new Map<number, { frames: CpuCallFrame[]; keys: string[] }>();
  /** Per node index: cumulative line ticks, and how many perf samples took a line of it. */
  private readonly lines = new Map<number, { lines: number[]; cumulative: number[]; taken: number }>();
  private readonly index: ReturnType<typeof indexNodes>;
  /** The inspector's sampling interval (µs): its median gap between samples. */
  readonly intervalUs: number;

  constructor(private readonly profile: CpuProfile) {
    this.index = indexNodes(profile);
    const n = profile.samples.length;
    const order = new Array<number>(n);
    const raw = new Float64Array(n);
    let t = profile.startTime;
    for (let i = 0; i < n; i++) {
      t += profile.timeDeltas[i] ?? 0;
      raw[i] = t;
      order[i] = i;
    }
    // V8's deltas can be negative by a few µs: sorted once, searched by halves.
    order.sort((a, b) => raw[a] - raw[b]);
    this.times = new Float64Array(n);
    this.leafOf = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      this.times[i] = raw[order[i]];
      this.leafOf[i] = this.index.byId.get(profile.samples[order[i]]) ?? -1;
    }
    const gaps: number[] = [];
    for (let i = 1; i < n; i++) if (this.times[i] > this.times[i - 1]) gaps.push(this.times[i] - this.times[i - 1]);
    gaps.sort((a, b) => a - b);
    this.intervalUs = gaps.length > 0 ? gaps[gaps.length >> 1] : 0;
  }

  /** The node indexes of the inspector samples within one interval of `timeUs`, nearest first. */
  near(timeUs: number): number[] {
    const t = this.times;
    if (t.length === 0 || this.intervalUs === 0) return [];
    let lo = 0;
    let hi = t.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (t[mid] < timeUs) lo = mid + 1;
      else hi = mid;
    }
    // lo: the first sample at or after timeUs; walk outwards from it both ways.
    const out: number[] = [];
    let before = lo - 1;
    let after = lo;
    for (;;) {
      const db = before >= 0 ? timeUs - t[before] : Infinity;
      const da = after < t.length ? t[after] - timeUs : Infinity;
      if (Math.min(db, da) > this.intervalUs) return out;
      if (db <= da) out.push(this.leafOf[before--]);
      else out.push(this.leafOf[after++]);
    }
  }

  /**
   * perf's frames of one sample (leaf first) with the inspector's inlined callees and line, when
   * the inspector sample nearest `timeUs` agrees with them. `optimized[i]` says whether perf's
   * frame i is optimized JS code.
   */
  enrich(frames: readonly CpuCallFrame[], optimized: readonly boolean[], timeUs: number): Enriched {
    const unchanged: Enriched = { frames: [...frames], inserted: 0, matched: false };
    const js: number[] = [];
    for (let i = frames.length - 1; i >= 0; i--) if (isPerfJs(frames[i])) js.push(i);
    if (js.length === 0 || js.some((i) => frames[i].url === '')) return unchanged;
    let leaf = -1;
    let at: number[] | undefined;
    for (const n of this.near(timeUs)) {
      at = this.agree(frames, js, n);
      if (at) {
        leaf = n;
        break;
      }
    }
    if (!at) return unchanged;
    const stack = this.stackOf(leaf);
    // Rebuilt outermost first, then turned leaf first.
    const out: CpuCallFrame[] = [];
    let inserted = 0;
    let lineAt = -1;
    let j = 0;
    for (let i = frames.length - 1; i >= 0; i--) {
      out.push(frames[i]);
      if (j < js.length && js[j] === i) {
        const next = j + 1 < js.length ? at[j + 1] : stack.frames.length;
        if (optimized[i] && next > at[j] + 1) {
          for (let k = at[j] + 1; k < next; k++) out.push({ ...stack.frames[k], scriptId: '1' });
          inserted += next - at[j] - 1;
        }
        // The innermost JS frame is the inspector's own node: its line is the node's.
        if (j === js.length - 1 && (optimized[i] ? next : at[j] + 1) === stack.frames.length) lineAt = out.length - 1;
        j++;
      }
    }
    out.reverse();
    const line = lineAt >= 0 ? this.takeLine(leaf) : undefined;
    return {
      frames: out,
      ...(line !== undefined ? { line: { index: out.length - 1 - lineAt, line } } : {}),
      inserted,
      matched: true,
    };
  }

  /** Where perf's JS frames (`js`, outermost first) lie among node's, in order; undefined when one is not there. */
  private agree(frames: readonly CpuCallFrame[], js: readonly number[], node: number): number[] | undefined {
    if (node < 0) return undefined;
    const keys = this.stackOf(node).keys;
    const at: number[] = [];
    let from = 0;
    for (const i of js) {
      const k = keys.indexOf(frameKey(frames[i]), from);
      if (k < 0) return undefined;
      at.push(k);
      from = k + 1;
    }
    return at;
  }

  private stackOf(node: number): { frames: CpuCallFrame[]; keys: string[] } {
    let s = this.stacks.get(node);
    if (!s) {
      const frames: CpuCallFrame[] = [];
      for (let n = node; n >= 0; n = this.index.parent[n]) {
        const cf = this.profile.nodes[n].callFrame;
        if (cf.url !== '') frames.push(cf);
      }
      frames.reverse();
      s = { frames, keys: frames.map(frameKey) };
      this.stacks.set(node, s);
    }
    return s;
  }

  /** The next line of `node`'s positionTicks for a perf sample, evenly in proportion to its ticks. */
  private takeLine(node: number): number | undefined {
    let l = this.lines.get(node);
    if (!l) {
      const ticks = [...(this.profile.nodes[node].positionTicks ?? [])].filter((t) => t.ticks > 0).sort((a, b) => a.line - b.line);
      let sum = 0;
      l = { lines: ticks.map((t) => t.line), cumulative: ticks.map((t) => (sum += t.ticks)), taken: 0 };
      this.lines.set(node, l);
    }
    const total = l.cumulative[l.cumulative.length - 1];
    if (total === undefined) return undefined;
    const u = ((l.taken++ + 1) * PHI) % 1;
    const k = l.cumulative.findIndex((c) => c > u * total);
    return l.lines[k < 0 ? l.lines.length - 1 : k];
  }
}
