// The hotspot list: functions ranked by (attributed) self time, with self and total shares
// of the non-idle time: report.json's Hotspot, and the same plus the frame index for analyzers.

import type { CallTree, FrameKind } from './call-tree.js';
import { attributedSelf } from './attribution.js';
import { frameTotals } from './frame-totals.js';

/** A ranked function as report.json's `hotspots` holds it. */
export interface Hotspot {
  function: string;
  /** Relative to the target's cwd for app code; as reported (node:..., node_modules/...) otherwise. */
  file: string;
  line: number;
  column?: number;
  /** Frame class: app, deps, node-core, v8-builtin, native, gc, idle, program. */
  kind: string;
  /** Self time after attribution (native/builtin/core/deps work charged to the nearest app frame), ms. */
  selfMs: number;
  /** Share of the non-idle CPU samples in the window, 0..1. */
  selfShare: number;
  totalMs: number;
  totalShare: number;
}

export interface ProfileHotspot {
  /** Index into tree.frames. */
  frame: number;
  function: string;
  file: string;
  line: number;
  column?: number;
  kind: FrameKind;
  selfMs: number;
  /** Share of the non-idle time, 0..1. */
  selfShare: number;
  totalMs: number;
  totalShare: number;
}

export interface HotspotOptions {
  /** At most this many (default 20). */
  limit?: number;
  /** Rank by attributed self time (default true): native/core/deps work charged to the app caller. */
  attributed?: boolean;
  /** Only these kinds (default: every kind but idle). */
  kinds?: readonly FrameKind[];
  /** Leave out functions below this self share (default 0). */
  minSelfShare?: number;
}

/** Divisor for ms: CPU trees are in µs; heap trees are in bytes and keep their unit. */
const toMs = (tree: CallTree) => (tree.unit === 'bytes' ? 1 : 1000);

export function hotspots(tree: CallTree, options: HotspotOptions = {}): ProfileHotspot[] {
  const { limit = 20, attributed = true, kinds, minSelfShare = 0 } = options;
  const totals = frameTotals(tree, attributed ? attributedSelf(tree) : tree.self);
  const base = tree.activeUs > 0 ? tree.activeUs : 1;
  const div = toMs(tree);
  const out: ProfileHotspot[] = [];
  for (let f = 1; f < tree.frames.length; f++) {
    const fr = tree.frames[f];
    if (fr.kind === 'idle' || (kinds && !kinds.includes(fr.kind))) continue;
    const self = totals.self[f];
    if (self <= 0 || self / base < minSelfShare) continue;
    out.push({
      frame: f,
      function: fr.name,
      file: fr.file,
      line: fr.line,
      ...(fr.column ? { column: fr.column } : {}),
      kind: fr.kind,
      selfMs: self / div,
      selfShare: self / base,
      totalMs: totals.total[f] / div,
      totalShare: totals.total[f] / base,
    });
  }
  out.sort((a, b) => b.selfMs - a.selfMs || b.totalMs - a.totalMs);
  return out.slice(0, limit);
}
