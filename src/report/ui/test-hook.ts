// A small read-only view of the page's state on window.__hotpath, for tests and benchmarks
// (they drive the page like a person and read the outcome here instead of from pixels).

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
}

export interface HotpathHook {
  ready: boolean;
  /** Time from navigation start until every section is built and drawn, ms. */
  readyMs: number;
  errors: string[];
  sections: string[];
  flame: FlameHookState | null;
  timelineCharts: number;
}

const state: HotpathHook = { ready: false, readyMs: 0, errors: [], sections: [], flame: null, timelineCharts: 0 };

export function hookState(): HotpathHook {
  return state;
}

/** Installs window.__hotpath as a getter returning a copy, so the page's state stays read-only. */
export function installHook(): void {
  Object.defineProperty(window, '__hotpath', {
    configurable: false,
    get: () => structuredClone(state),
  });
}
