// The call-tree model shared by the analyzers, the report UI and the exports. One model for
// every profile source (.cpuprofile and .heapprofile now; V8 tick logs and perf later). Built
// by build-call-tree.ts and build-heap-tree.ts (see docs/profile-model.md for classification,
// source maps and attribution).
//
// Stable contract. Extended additively by the profile owner: `unit`, `sampleCount`, the
// optional `inlineWork` and `dropped` fields, and the FrameKind constant list.

/** Frame classes: where the time was spent. */
export const FRAME_KINDS = ['app', 'deps', 'node-core', 'v8-builtin', 'native', 'gc', 'idle', 'program', 'agent', 'kernel'] as const;
export type FrameKind = (typeof FRAME_KINDS)[number];

export interface Frame {
  /** Function name as written in the source ("(anonymous)" when none). */
  name: string;
  /** Original file after source maps: relative to the cwd for app and deps, `node:…` for core, '' for natives. */
  file: string;
  /** 1-based; 0 when unknown. */
  line: number;
  /** 1-based; 0 when unknown. */
  column: number;
  kind: FrameKind;
}

/** Work a sample was doing, by what the frames (or, for inlined builtins, the source line) show. */
export type WorkKind =
  | 'json'
  | 'crypto'
  | 'regex'
  | 'zlib'
  | 'zlib-async'
  | 'fs'
  | 'buffer'
  | 'gc'
  | 'http'
  | 'http-client'
  | 'net'
  | 'stream'
  | 'events'
  | 'timers'
  | 'module-loading'
  | 'inspect'
  | 'vm'
  | 'intl'
  | 'errors'
  | 'search'
  | 'copy'
  | 'child-process'
  | 'compile'
  | 'clone'
  | 'ipc'
  | 'idle'
  | 'program'
  | 'app'
  | 'deps'
  | 'node-core'
  | 'native'
  | 'kernel';

/**
 * An aggregated call tree in flat, typed-array form (compact and fast to walk).
 * Node 0 is the root. Nodes are stored in depth-first pre-order, so a node's subtree is
 * the contiguous range [i, i + subtreeSize[i]).
 */
export interface CallTree {
  /** Interned frames; nodes refer to them by index. frames[0] is the root frame. */
  frames: Frame[];
  frame: Int32Array;
  parent: Int32Array;
  depth: Int32Array;
  subtreeSize: Int32Array;
  /** Self and total weight: µs for CPU trees (from timeDeltas, never the nominal interval), bytes for heap trees. */
  self: Float64Array;
  total: Float64Array;
  /** Total sampled weight (µs, or bytes for heap trees), and the part that was not idle. */
  totalUs: number;
  activeUs: number;
  /** Epoch-independent profile bounds (µs, the profile's monotonic clock), after any window. */
  startUs: number;
  endUs: number;
  /** What the weights measure. Absent means 'us'. */
  unit?: 'us' | 'bytes';
  /** Samples counted into the tree (after any window). */
  sampleCount?: number;
  /**
   * Self time of app and dependency nodes spent on source lines that call a builtin V8 runs
   * without a frame of its own (JSON.stringify/parse show no frame: their time is the caller's
   * self time). Found from the profile's positionTicks and the generated source's text.
   */
  inlineWork?: { node: number; work: WorkKind; label: string; us: number }[];
  /** Samples left out because they named no node or fell outside the window. */
  dropped?: number;
  /**
   * Per app and dependency frame, the samples on each of its source lines (original lines after
   * source maps for app frames; a dependency's lines as in its file),
   * from the profile's positionTicks over the whole profile: where in a function its own time
   * went ("the hottest line").
   */
  lineTicks?: { frame: number; line: number; ticks: number }[];
}
