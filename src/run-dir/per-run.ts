// The one cache of what is computed from a run: several readers need the same thing of a run
// (the loop figures, a profile read and expanded, the CPU view, the run's source maps, where a
// pattern is written), so each is computed once per run and kept as long as the run is. Keyed
// by the run object (a RunData, or the part of it a function reads), never by a global.

import type { RunData } from './run-data.js';

/** `compute`, memoized per run (a pure function of it), undefined results included. */
export function perRun<T, R extends object = RunData>(compute: (run: R) => T): (run: R) => T {
  const cache = new WeakMap<R, { value: T }>();
  return (run) => {
    let hit = cache.get(run);
    if (hit === undefined) cache.set(run, (hit = { value: compute(run) }));
    return hit.value;
  };
}

type Outcome<T> = { value: T } | { error: unknown };

/**
 * `compute`, memoized per run and key (a file's path, a pattern). A throw is kept like a value
 * and thrown again: a file that cannot be read is tried once per run, not by every reader.
 */
export function perRunAndKey<K, T, R extends object = RunData>(compute: (run: R, key: K) => T): (run: R, key: K) => T {
  const cache = new WeakMap<R, Map<K, Outcome<T>>>();
  return (run, key) => {
    let byKey = cache.get(run);
    if (byKey === undefined) cache.set(run, (byKey = new Map()));
    let hit = byKey.get(key);
    if (hit === undefined) {
      try {
        hit = { value: compute(run, key) };
      } catch (error) {
        hit = { error };
      }
      byKey.set(key, hit);
    }
    if ('error' in hit) throw hit.error;
    return hit.value;
  };
}
