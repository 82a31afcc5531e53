// Samples as stacks of model frames: the form the exports need (pprof, speedscope, folded).
// From a .cpuprofile every sample keeps its time and weight (speedscope's timeline); from a
// CallTree (heap profiles) each node with self weight becomes one stack.

import type { CallTree, Frame } from './call-tree.js';
import type { CpuProfile } from './cpu-profile.js';
import type { BuildCallTreeOptions } from './build-call-tree.js';
import { FrameTable } from './frame-table.js';
import { indexNodes, nodeIndex } from './raw-index.js';
import { resolveWindow } from './profile-window.js';
import { sampleWeights } from './sample-weights.js';
import { SourceMapResolver } from './source-maps.js';

export interface StackSamples {
  /** frames[0] is the root frame, never part of a stack. */
  frames: Frame[];
  unit: 'us' | 'bytes';
  /** Unique stacks, outermost frame first (frame indexes). */
  stacks: number[][];
  /** Per unique stack: summed weight and sample count. */
  weight: number[];
  count: number[];
  /** CPU only: the samples in time order (stack index, weight µs, time µs on the profile's clock). */
  timeline?: { stack: Int32Array; weight: Float64Array; time: Float64Array };
  /** Sum of all weights. */
  total: number;
  startUs: number;
  endUs: number;
}

class StackInterner {
  readonly stacks: number[][] = [];
  readonly #ids = new Map<string, number>();

  /** The id of `parentStack` + frame (parentStack -1 = empty). */
  child(parentStack: number, frame: number): number {
    const key = `${parentStack}:${frame}`;
    let id = this.#ids.get(key);
    if (id === undefined) {
      id = this.stacks.length;
      this.stacks.push(parentStack < 0 ? [frame] : [...this.stacks[parentStack], frame]);
      this.#ids.set(key, id);
    }
    return id;
  }
}

/** Every sample of a CPU profile as a stack of source-mapped, classified frames. */
export function cpuStackSamples(profile: CpuProfile, options: BuildCallTreeOptions): StackSamples {
  const resolver = options.sourceMaps === false ? undefined : (options.resolver ?? new SourceMapResolver());
  const frames = new FrameTable({ cwd: options.cwd, appRoots: options.appRoots, resolver });
  const raw = indexNodes(profile);
  const interner = new StackInterner();
  const stackOf = new Int32Array(raw.count).fill(-2); // -2 unknown, -1 the root (empty stack)
  const resolve = (node: number): number => {
    const path: number[] = [];
    let i = node;
    while (i !== raw.root && stackOf[i] === -2) { path.push(i); i = raw.parent[i]; }
    let s = i === raw.root ? -1 : stackOf[i];
    for (let k = path.length - 1; k >= 0; k--) {
      s = interner.child(s, frames.intern(profile.nodes[path[k]].callFrame));
      stackOf[path[k]] = s;
    }
    return s;
  };
  const win = resolveWindow(profile, options.window);
  const w = sampleWeights(profile);
  const stack: number[] = [], weight: number[] = [], time: number[] = [];
  for (const s of w.order) {
    const node = nodeIndex(raw, profile.samples[s]);
    const t = w.time[s];
    if (node === undefined || !raw.reachable[node] || node === raw.root || t < win.filterStart || t >= win.filterEnd) continue;
    stack.push(resolve(node));
    weight.push(w.weight[s]);
    time.push(t);
  }
  const out = aggregate(frames.frames, 'us', interner.stacks, stack, weight);
  out.timeline = { stack: Int32Array.from(stack), weight: Float64Array.from(weight), time: Float64Array.from(time) };
  out.startUs = win.startUs;
  out.endUs = win.endUs;
  return out;
}

function aggregate(frames: Frame[], unit: 'us' | 'bytes', stacks: number[][], stack: number[], weight: number[]): StackSamples {
  const wsum = new Array<number>(stacks.length).fill(0);
  const count = new Array<number>(stacks.length).fill(0);
  let total = 0;
  for (let k = 0; k < stack.length; k++) {
    wsum[stack[k]] += weight[k];
    count[stack[k]]++;
    total += weight[k];
  }
  return { frames, unit, stacks, weight: wsum, count, total, startUs: 0, endUs: 0 };
}

/** One stack per tree node that has self weight (heap trees, or any aggregated tree). */
export function treeStackSamples(tree: CallTree): StackSamples {
  const stacks: number[][] = [];
  const weight: number[] = [];
  const path: number[] = [];
  let total = 0;
  for (let i = 1; i < tree.frame.length; i++) {
    path.length = tree.depth[i] - 1;
    path.push(tree.frame[i]);
    if (tree.self[i] <= 0) continue;
    stacks.push([...path]);
    weight.push(tree.self[i]);
    total += tree.self[i];
  }
  return { frames: tree.frames, unit: tree.unit ?? 'us', stacks, weight, count: stacks.map(() => 1), total, startUs: tree.startUs, endUs: tree.endUs };
}
