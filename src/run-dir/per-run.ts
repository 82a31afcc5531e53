// Several analyzers read the same signals of a run (loop figures, the CPU view, the heap
// profiles, the latency trend): each is computed once per run and kept as long as the run is.

import type { RunData } from './run-data.js';

/** `compute`, memoized per run (a pure function of it), undefined results included. */
export function perRun<T>(compute: (run: RunData) => T): (run: RunData) => T {
  const cache = new WeakMap<RunData, { value: T }>();
  return (run) => {
    let hit = cache.get(run);
    if (hit === undefined) cache.set(run, (hit = { value: compute(run) }));
    return hit.value;
  };
}
