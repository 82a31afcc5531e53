// Turns a run's profiles into the payload's compact form: interned frames (classified and
// source-mapped by src/profile, exactly as the diagnosis sees them), the aggregated tree as
// flat parent/frame arrays, and for CPU profiles every sample as (tree node, µs since the
// previous sample) so the page can rebuild the tree for any time window.

import type { CpuProfile } from '../../profile/cpu-profile.js';
import type { HeapProfile } from '../../profile/heap-profile.js';
import type { CallTree, Frame } from '../../profile/call-tree.js';
import { FRAME_KINDS } from '../../profile/call-tree.js';
import { FrameTable } from '../../profile/frame-table.js';
import { layoutTree, type RawTree } from '../../profile/layout-tree.js';
import { sampleWeights } from '../../profile/sample-weights.js';
import { buildHeapTree } from '../../profile/build-heap-tree.js';
import type { SourceMapResolver } from '../../profile/source-maps.js';
import type { PayloadProfile } from './report-payload.js';
import { StringTable } from './string-table.js';

export interface ProfileContext {
  cwd: string;
  resolver?: SourceMapResolver;
  /** Epoch ms every payload time is relative to. */
  runStart: number;
  /** Most samples stored per profile (default MAX_STORED_SAMPLES). */
  maxSamples?: number;
}

/**
 * Past this many stored samples (about 10 minutes of busy CPU at 1 ms), samples are summed
 * per node into time slots, so a long run cannot make a report of hundreds of MB.
 */
export const MAX_STORED_SAMPLES = 600_000;

export interface ProfileIdentity {
  id: string;
  label: string;
  pid: number;
  threadId: number;
  /** Epoch ms at which the profile's startTime was taken. */
  start: number;
}

/** V8's flat node list as parent/children arrays (a node keeps its first parent). */
function rawTree(profile: CpuProfile): RawTree & { byId: Map<number, number> } {
  const count = profile.nodes.length;
  const byId = new Map<number, number>();
  profile.nodes.forEach((n, i) => byId.set(n.id, i));
  const parent = new Int32Array(count).fill(-1);
  const children: Int32Array[] = new Array<Int32Array>(count);
  for (let i = 0; i < count; i++) {
    const kids: number[] = [];
    for (const id of profile.nodes[i].children ?? []) {
      const c = byId.get(id);
      if (c !== undefined && c !== i && parent[c] === -1) {
        parent[c] = i;
        kids.push(c);
      }
    }
    children[i] = Int32Array.from(kids);
  }
  let root = 0;
  while (parent[root] !== -1) root = parent[root];
  return { count, parent, children, root, byId };
}

function frameColumns(frames: Frame[], strings: StringTable): PayloadProfile['frames'] {
  const cols: PayloadProfile['frames'] = { name: [], file: [], line: [], col: [], kind: [] };
  for (const f of frames) {
    cols.name.push(strings.intern(f.name));
    cols.file.push(strings.intern(f.file));
    cols.line.push(f.line);
    cols.col.push(f.column);
    cols.kind.push(Math.max(0, FRAME_KINDS.indexOf(f.kind)));
  }
  return cols;
}

export function cpuProfilePayload(profile: CpuProfile, who: ProfileIdentity, ctx: ProfileContext): PayloadProfile {
  const frames = new FrameTable({ cwd: ctx.cwd, resolver: ctx.resolver });
  const raw = rawTree(profile);
  const rawFrame = new Int32Array(raw.count);
  for (let i = 0; i < raw.count; i++) rawFrame[i] = i === raw.root ? 0 : frames.intern(profile.nodes[i].callFrame);
  const w = sampleWeights(profile);
  const rawSelf = new Float64Array(raw.count);
  for (let s = 0; s < profile.samples.length; s++) {
    const r = raw.byId.get(profile.samples[s]);
    if (r !== undefined) rawSelf[r] += w.weight[s];
  }
  const { arrays, aggOf } = layoutTree(raw, rawFrame, rawSelf, frames.frames);
  const encoded = encodeSamples(profile, raw.byId, aggOf, w);
  const samples = capSamples(encoded, ctx.maxSamples ?? MAX_STORED_SAMPLES);
  const strings = new StringTable();
  return {
    id: who.id,
    kind: 'cpu',
    pid: who.pid,
    threadId: who.threadId,
    label: who.label,
    unit: 'us',
    frames: frameColumns(frames.frames, strings),
    nodes: { parent: Array.from(arrays.parent), frame: Array.from(arrays.frame) },
    samples: { node: samples.node, dt: samples.dt, lastWeight: samples.lastWeight, ...(samples.w ? { w: samples.w } : {}) },
    startSec: (who.start - ctx.runStart) / 1000,
    strings: strings.strings,
    notes: [
      ...(encoded.dropped ? [`${encoded.dropped} samples named no profile node and were left out`] : []),
      ...(samples.slotUs ? [`samples summed into ${samples.slotUs / 1000} ms slots to keep the report small`] : []),
    ],
  };
}

interface EncodedSamples {
  node: number[];
  dt: number[];
  lastWeight: number;
  dropped: number;
}

/**
 * Consecutive samples of the same node are stored once (its weight then runs to the next
 * stored sample, so totals are unchanged) as long as the run stays shorter than this: a
 * time window can still cut it this finely. Busy loops and idle stretches shrink a lot.
 */
export const SAMPLE_RUN_MAX_US = 5000;

/** Samples in time order as (node, integer µs since the previous one), rounding without drift. */
function encodeSamples(
  profile: CpuProfile,
  byId: Map<number, number>,
  aggOf: Int32Array,
  w: ReturnType<typeof sampleWeights>,
): EncodedSamples {
  const out: EncodedSamples = { node: [], dt: [], lastWeight: 0, dropped: 0 };
  let prev = 0;
  let runWeight = 0;
  for (const s of w.order) {
    const r = byId.get(profile.samples[s]);
    const node = r === undefined ? -1 : aggOf[r];
    if (node < 0) {
      if (w.weight[s] > 0) out.dropped++;
      continue;
    }
    const at = Math.round(w.time[s] - profile.startTime);
    const last = out.node.length - 1;
    // prev is where the stored run started; merging extends it to this sample's end.
    if (last >= 0 && out.node[last] === node && at - prev + w.weight[s] <= SAMPLE_RUN_MAX_US) {
      runWeight += w.weight[s];
      continue;
    }
    out.node.push(node);
    out.dt.push(at - prev);
    prev = at;
    runWeight = w.weight[s];
  }
  out.lastWeight = Math.round(runWeight);
  return out;
}

interface StoredSamples extends EncodedSamples {
  w?: number[];
  slotUs?: number;
}

/** Sums samples per node into time slots (doubling the slot) until at most `max` remain. */
export function capSamples(e: EncodedSamples, max: number): StoredSamples {
  if (e.node.length <= max) return e;
  const n = e.node.length;
  const time = new Float64Array(n);
  for (let i = 0, t = 0; i < n; i++) time[i] = t += e.dt[i];
  const weight = (i: number): number => (i + 1 < n ? e.dt[i + 1] : e.lastWeight);
  for (let slotUs = 10_000; ; slotUs *= 2) {
    const out: StoredSamples = { node: [], dt: [], w: [], lastWeight: 0, dropped: e.dropped, slotUs };
    let i = 0;
    let prev = 0;
    while (i < n && out.node.length <= max) {
      const slot = Math.floor(time[i] / slotUs);
      const sums = new Map<number, number>();
      for (; i < n && Math.floor(time[i] / slotUs) === slot; i++) sums.set(e.node[i], (sums.get(e.node[i]) ?? 0) + weight(i));
      const at = slot * slotUs;
      for (const [node, w] of sums) {
        out.node.push(node);
        out.dt.push(at - prev);
        out.w!.push(w);
        prev = at;
      }
    }
    if (out.node.length <= max) return out;
  }
}

export function heapProfilePayload(profile: HeapProfile, who: ProfileIdentity, ctx: ProfileContext): PayloadProfile {
  const tree: CallTree = buildHeapTree(profile, { cwd: ctx.cwd, resolver: ctx.resolver });
  const strings = new StringTable();
  return {
    id: who.id,
    kind: 'heap',
    pid: who.pid,
    threadId: who.threadId,
    label: who.label,
    unit: 'bytes',
    frames: frameColumns(tree.frames, strings),
    nodes: { parent: Array.from(tree.parent), frame: Array.from(tree.frame) },
    self: Array.from(tree.self, (v) => Math.round(v)),
    startSec: (who.start - ctx.runStart) / 1000,
    strings: strings.strings,
    notes: [],
  };
}
