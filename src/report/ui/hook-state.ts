// The shape of window.__hotpath, the page's read-only test hook (types only, shared with the
// browser tests, which run in Node without the DOM types).

export interface FlameHookState {
  profile: string;
  mode: string;
  hiddenLayers: string[];
  /** Frames drawn in the last paint (after culling). */
  visibleFrames: number;
  /** Nodes in the view tree. */
  treeNodes: number;
  /** Weight shown at the root of the view (µs or bytes). */
  totalShown: number;
  /** Share of the shown weight matched by the search, 0..1; null without a search. */
  searchShare: number | null;
  window: { from: number; to: number } | null;
  zoomedFrame: string | null;
  focusFrame: string | null;
  lastBuildMs: number;
  lastDrawMs: number;
  /** View-tree rebuilds since the page loaded (each costs tens of ms on a large profile). */
  builds: number;
}

export interface HotpathHook {
  ready: boolean;
  /** Time from navigation start until every section is built and drawn, ms. */
  readyMs: number;
  errors: string[];
  sections: string[];
  flame: FlameHookState | null;
  timelineCharts: number;
  /** compare.html's differential flame graph; absent on report.html. */
  diff?: DiffHookState | null;
}

/** One frame drawn by the differential flame graph, CSS px relative to its canvas. */
export interface DiffHookFrame {
  name: string;
  file: string;
  x: number;
  y: number;
  w: number;
  color: string;
  /** Per completed request, µs. */
  selfBeforeUs: number;
  selfAfterUs: number;
  totalBeforeUs: number;
  totalAfterUs: number;
}

export interface DiffHookState {
  widthBy: string;
  colorBy: string;
  treeNodes: number;
  visibleFrames: number;
  /** The widest frames drawn (at most 300). */
  frames: DiffHookFrame[];
  /** The tooltip's text while it shows, else null. */
  tooltip: string | null;
}
