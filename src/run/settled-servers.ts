// The processes serving the driven address once their set has stopped growing. A cluster's
// workers listen one after the other: perf records only the pids it was given when it attached
// (`-p`), and keep-alive connections opened when the load starts stay with the workers that
// listened by then (the primary hands each new connection to a listening worker), so a worker
// that listens a moment after the first would go unrecorded, or serve nothing.

/** How long the set must stay the same, and the most it is waited for. */
export const SETTLE_MS = 600;
export const SETTLE_MAX_MS = 5_000;

/** Waits SETTLE_MS after the last new pid, at most SETTLE_MAX_MS; a single process costs SETTLE_MS. */
export async function settledServers(current: () => number[], signal?: AbortSignal): Promise<number[]> {
  const started = Date.now();
  let pids = new Set(current());
  let changed = Date.now();
  while (!signal?.aborted && Date.now() - changed < SETTLE_MS && Date.now() - started < SETTLE_MAX_MS) {
    await new Promise((r) => setTimeout(r, 100));
    const now = current();
    if (now.some((p) => !pids.has(p))) {
      pids = new Set([...pids, ...now]);
      changed = Date.now();
    }
  }
  return [...pids];
}
