// A profile from the payload, decoded once into typed arrays: the base call tree the views
// are built from, and the CPU samples with absolute times so any time window can be summed.

import { FRAME_KINDS, type PayloadFrameKind, type PayloadProfile } from '../../html/report-payload.js';

export interface ProfileModel {
  id: string;
  label: string;
  kind: 'cpu' | 'heap';
  unit: 'us' | 'bytes';
  /** Frames. */
  frameCount: number;
  frameName: string[];
  frameFile: string[];
  frameLine: Int32Array;
  frameKind: Uint8Array;
  /** Base nodes in pre-order. */
  nodeCount: number;
  nodeParent: Int32Array;
  nodeFrame: Int32Array;
  /** Heap profiles: self bytes per node. */
  staticSelf?: Float64Array;
  /** CPU samples: node, time (s since run start) and weight (µs), sorted by time. */
  sampleNode: Int32Array;
  sampleTime: Float64Array;
  sampleWeight: Float64Array;
  notes: string[];
}

export const KIND_NAMES: readonly PayloadFrameKind[] = FRAME_KINDS;

export function decodeProfile(p: PayloadProfile): ProfileModel {
  const nf = p.frames.name.length;
  const frameName = new Array<string>(nf);
  const frameFile = new Array<string>(nf);
  for (let i = 0; i < nf; i++) {
    frameName[i] = p.strings[p.frames.name[i]] ?? '?';
    frameFile[i] = p.strings[p.frames.file[i]] ?? '';
  }
  const samples = decodeSamples(p);
  return {
    id: p.id,
    label: p.label,
    kind: p.kind,
    unit: p.unit,
    frameCount: nf,
    frameName,
    frameFile,
    frameLine: Int32Array.from(p.frames.line),
    frameKind: Uint8Array.from(p.frames.kind),
    nodeCount: p.nodes.parent.length,
    nodeParent: Int32Array.from(p.nodes.parent),
    nodeFrame: Int32Array.from(p.nodes.frame),
    ...(p.self ? { staticSelf: Float64Array.from(p.self) } : {}),
    ...samples,
    notes: p.notes,
  };
}

/** Undoes the delta encoding; a sample weighs the time until the next one. */
function decodeSamples(p: PayloadProfile): Pick<ProfileModel, 'sampleNode' | 'sampleTime' | 'sampleWeight'> {
  const s = p.samples;
  const n = s ? s.node.length : 0;
  const sampleNode = new Int32Array(n);
  const sampleTime = new Float64Array(n);
  const sampleWeight = new Float64Array(n);
  if (!s || n === 0) return { sampleNode, sampleTime, sampleWeight };
  let tUs = 0;
  for (let i = 0; i < n; i++) {
    tUs += s.dt[i];
    sampleNode[i] = s.node[i];
    sampleTime[i] = p.startSec + tUs / 1e6;
  }
  if (s.w) for (let i = 0; i < n; i++) sampleWeight[i] = s.w[i];
  else {
    for (let i = 0; i < n - 1; i++) sampleWeight[i] = s.dt[i + 1];
    sampleWeight[n - 1] = s.lastWeight;
  }
  return { sampleNode, sampleTime, sampleWeight };
}

/** Self weight per base node over [from, to] seconds (everything when the window is null). */
export function selfWeights(m: ProfileModel, window: { from: number; to: number } | null): Float64Array {
  if (m.staticSelf) return m.staticSelf;
  const self = new Float64Array(m.nodeCount);
  let i = window ? lowerBound(m.sampleTime, window.from) : 0;
  const end = window ? window.to : Infinity;
  for (; i < m.sampleNode.length && m.sampleTime[i] <= end; i++) self[m.sampleNode[i]] += m.sampleWeight[i];
  return self;
}

function lowerBound(a: Float64Array, v: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Time span covered by the samples, seconds since the run started. */
export function sampleSpan(m: ProfileModel): { from: number; to: number } | null {
  const n = m.sampleTime.length;
  return n === 0 ? null : { from: m.sampleTime[0], to: m.sampleTime[n - 1] };
}
