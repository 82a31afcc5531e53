// A small read-only view of the page's state on window.__hotpath, for tests and benchmarks
// (they drive the page like a person and read the outcome here instead of from pixels).

import type { HotpathHook } from './hook-state.js';

export type { HotpathHook } from './hook-state.js';

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
