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

/**
 * Stacks deeper than this keep their outermost STACK_HEAD_FRAMES and innermost STACK_TAIL_FRAMES
 * frames, with one ELIDED_FRAME between: a 20,000-frame recursion sampled at every depth would
 * otherwise make stacks of O(depth²) frames (gigabytes in folded or speedscope form). V8 samples
 * at most 255 frames of a CPU stack, so real CPU profiles are not cut.
 */
export const MAX_STACK_FRAMES = 512;
const STACK_HEAD_FRAMES = 256;
const STACK_TAIL_FRAMES = MAX_STACK_FRAMES - STACK_HEAD_FRAMES - 1;
export const ELIDED_FRAME_NAME = '(frames elided: deep stack)';

const elidedFrame = (): Frame => ({ name: ELIDED_FRAME_NAME, file: '', line: 0, column: 0, kind: 'program' });

/**
 * Stacks as a prefix tree (each stack: its parent stack and its leaf frame), so interning a
 * deep path costs one entry per frame, not a copy of the path per prefix; only the stacks
 * samples land on are turned into arrays (materialize).
 */
class StackInterner {
  readonly parent: number[] = [];
  readonly frame: number[] = [];
  readonly depth: number[] = [];
  /** The ancestor at depth STACK_HEAD_FRAMES (or the stack itself when shallower). */
  readonly head: number[] = [];
  readonly #ids = new Map<string, number>();

  /** The id of `parentStack` + frame (parentStack -1 = empty). */
  child(parentStack: number, frame: number): number {
    const key = `${parentStack}:${frame}`;
    let id = this.#ids.get(key);
    if (id === undefined) {
      id = this.frame.length;
      const depth = parentStack < 0 ? 1 : this.depth[parentStack] + 1;
      this.parent.push(parentStack);
      this.frame.push(frame);
      this.depth.push(depth);
      this.head.push(depth <= STACK_HEAD_FRAMES ? id : this.head[parentStack]);
      this.#ids.set(key, id);
    }
    return id;
  }

  /** The frames of stack `id`, outermost first, cut as MAX_STACK_FRAMES says (`elided`: the frame index of the cut). */
  materialize(id: number, elided: () => number): number[] {
    const d = this.depth[id];
    if (d <= MAX_STACK_FRAMES) return this.#path(id, d);
    const tail: number[] = [];
    let i = id;
    for (let k = 0; k < STACK_TAIL_FRAMES; k++) {
      tail.push(this.frame[i]);
      i = this.parent[i];
    }
    const head = this.#path(this.head[id], STACK_HEAD_FRAMES);
    head.push(elided());
    for (let k = tail.length - 1; k >= 0; k--) head.push(tail[k]);
    return head;
  }

  #path(id: number, depth: number): number[] {
    const out = new Array<number>(depth);
    for (let i = id, k = depth - 1; k >= 0; i = this.parent[i], k--) out[k] = this.frame[i];
    return out;
  }
}

/** Turns interned stack ids into arrays, keeping only the stacks used (`ids` are renumbered in place). */
function usedStacks(interner: StackInterner, frames: Frame[], ids: number[]): number[][] {
  const renumber = new Map<number, number>();
  const stacks: number[][] = [];
  let elided = -1;
  const elidedIndex = () => (elided >= 0 ? elided : (elided = frames.push(elidedFrame()) - 1));
  for (let k = 0; k < ids.length; k++) {
    let n = renumber.get(ids[k]);
    if (n === undefined) {
      n = stacks.length;
      stacks.push(interner.materialize(ids[k], elidedIndex));
      renumber.set(ids[k], n);
    }
    ids[k] = n;
  }
  return stacks;
}

/** A tree path (outermost first) cut as MAX_STACK_FRAMES says. */
function capPath(path: readonly number[], elided: () => number): number[] {
  if (path.length <= MAX_STACK_FRAMES) return path.slice();
  return [...path.slice(0, STACK_HEAD_FRAMES), elided(), ...path.slice(path.length - STACK_TAIL_FRAMES)];
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
    while (i !== raw.root && stackOf[i] === -2) {
      path.push(i);
      i = raw.parent[i];
    }
    let s = i === raw.root ? -1 : stackOf[i];
    for (let k = path.length - 1; k >= 0; k--) {
      s = interner.child(s, frames.intern(profile.nodes[path[k]].callFrame));
      stackOf[path[k]] = s;
    }
    return s;
  };
  const win = resolveWindow(profile, options.window);
  const w = sampleWeights(profile);
  const stack: number[] = [],
    weight: number[] = [],
    time: number[] = [];
  for (const s of w.order) {
    const node = nodeIndex(raw, profile.samples[s]);
    const t = w.time[s];
    if (node === undefined || !raw.reachable[node] || node === raw.root || t < win.filterStart || t >= win.filterEnd) continue;
    stack.push(resolve(node));
    weight.push(w.weight[s]);
    time.push(t);
  }
  const out = aggregate(frames.frames, 'us', usedStacks(interner, frames.frames, stack), stack, weight);
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
  const frames = tree.frames.slice();
  let elided = -1;
  const elidedIndex = () => (elided >= 0 ? elided : (elided = frames.push(elidedFrame()) - 1));
  let total = 0;
  for (let i = 1; i < tree.frame.length; i++) {
    path.length = tree.depth[i] - 1;
    path.push(tree.frame[i]);
    if (tree.self[i] <= 0) continue;
    stacks.push(capPath(path, elidedIndex));
    weight.push(tree.self[i]);
    total += tree.self[i];
  }
  return { frames, unit: tree.unit ?? 'us', stacks, weight, count: stacks.map(() => 1), total, startUs: tree.startUs, endUs: tree.endUs };
}
