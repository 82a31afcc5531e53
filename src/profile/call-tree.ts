// The call-tree model shared by the analyzers, the report UI and the exports. One model for
// every profile source (.cpuprofile now; V8 tick logs and perf later). Built by
// build-call-tree.ts (see there for classification, source maps and attribution).

/** Frame classes: where the time was spent. */
export type FrameKind = 'app' | 'deps' | 'node-core' | 'v8-builtin' | 'native' | 'gc' | 'idle' | 'program';

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

/**
 * An aggregated call tree in flat, typed-array form (compact and fast to walk).
 * Node 0 is the root. Nodes are stored in depth-first pre-order, so a node's subtree is
 * the contiguous range [i, i + subtreeSize[i]).
 */
export interface CallTree {
  /** Interned frames; nodes refer to them by index. */
  frames: Frame[];
  frame: Int32Array;
  parent: Int32Array;
  depth: Int32Array;
  subtreeSize: Int32Array;
  /** Self and total time in µs (from timeDeltas, never from the nominal interval). */
  self: Float64Array;
  total: Float64Array;
  /** Total sampled time in µs, and the part that was not idle. */
  totalUs: number;
  activeUs: number;
  /** Epoch-independent profile bounds (µs, the profile's monotonic clock). */
  startUs: number;
  endUs: number;
}
