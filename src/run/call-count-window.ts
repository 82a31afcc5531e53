// When the agents count calls per function (agent/profiling/call-counts.ts): a short window right
// after the measured load, while the run drives a little more load that is not measured (no load
// result, outside the load window, after the CPU profile stopped). Counting costs the target: V8
// runs the code without inlining and counts every call meanwhile (a hapi hello world answered 5
// times fewer requests per second in the window, a helper-heavy loop ran 4.4 times slower), so
// inside the load it would lower the throughput and raise the latency percentiles the run reports.

//
// The window adds its length to the time from the end of the load to the results (issue 21: under
// 1 s), so it is as short as the counts allow: what they are for is a ratio of calls (a helper
// called 3,000 times per call of its loop), which any window with a few requests gives; calls per
// request divide by the requests finished in it, read from telemetry sampled every 100 ms and
// interpolated, so its edges move that figure by several per cent at steady load.

//
// A starved target (a busy machine: the server got little CPU in that half second) can finish no
// request in it, and the findings lose their calls per request. So the window is adaptive: read
// once it lasted CALL_COUNT_MS and the driven threads' telemetry shows CALL_COUNT_ENOUGH_REQUESTS
// finished in it (the CLI sends `call-count-read`), else at CALL_COUNT_MAX_MS at the latest (the
// agents' own timer), whichever comes first.

/** The window opens this long after the load's planned end (the profile's stop, sent at the end, goes first). */
export const CALL_COUNT_GAP_MS = 100;
/** How long calls are counted at least. */
export const CALL_COUNT_MS = 500;
/** How long calls are counted at most, when the window holds too few requests (a starved target). */
export const CALL_COUNT_MAX_MS = 2000;
/**
 * Requests the window should hold before it is read: twice the least a finding uses
 * (CALL_COUNT_MIN_REQUESTS), so that calls per request are good to a tenth or so.
 */
export const CALL_COUNT_ENOUGH_REQUESTS = 10;
/** The extra load runs on this long after the window closes, so requests run until it is read. */
export const CALL_COUNT_TAIL_MS = 50;
/** How often the CLI looks whether the window holds enough requests. */
export const CALL_COUNT_POLL_MS = 20;

export interface CallCountWindow {
  /** Epoch ms the window opens, the earliest it is read, and the latest. */
  from: number;
  readFrom: number;
  until: number;
}

/** Epoch ms of the window for a load starting at `loadStart` and lasting `durationMs`. */
export function callCountWindow(loadStart: number, durationMs: number): CallCountWindow | undefined {
  if (!(durationMs > 0)) return undefined;
  const from = loadStart + durationMs + CALL_COUNT_GAP_MS;
  return { from, readFrom: from + CALL_COUNT_MS, until: from + CALL_COUNT_MAX_MS };
}

/** A connection's telemetry readings and window opening as the CLI keeps them (agent-server.ts, AgentPeer). */
interface Peer {
  pid: number;
  threadId: number;
  loop: readonly { t: number; intervalMs?: number; finished?: number }[];
  callWindowStart?: number;
}

/**
 * Requests finished since `from` (epoch ms) by a thread's telemetry, the reading that straddles
 * it counted in proportion (as the analysis interpolates them).
 */
export function requestsSince(loop: Peer['loop'], from: number): number {
  let n = 0;
  for (const r of loop) {
    if (r.finished === undefined || r.t <= from) continue;
    const span = r.intervalMs ?? 0;
    n += span > 0 ? r.finished * Math.min(1, (r.t - from) / span) : r.finished;
  }
  return n;
}

/**
 * Requests the counting threads finished in their windows so far: each thread's since its
 * window opened (its agent worker's `call-window`, sent on a connection of its own, matched by
 * pid and thread), not before the planned opening. Threads whose window did not open count none.
 */
export function requestsInWindows(peers: readonly Peer[], window: Pick<CallCountWindow, 'from'>): number {
  const opened = new Map<string, number>();
  for (const p of peers) if (p.callWindowStart !== undefined) opened.set(`${p.pid}:${p.threadId}`, p.callWindowStart);
  let n = 0;
  for (const p of peers) {
    const start = opened.get(`${p.pid}:${p.threadId}`);
    if (start !== undefined) n += requestsSince(p.loop, Math.max(window.from, start));
  }
  return n;
}

/** Whether the window can be read at `now`: it lasted CALL_COUNT_MS and holds enough requests. */
export function callCountReadable(peers: readonly Peer[], window: CallCountWindow, now: number): boolean {
  return now >= window.readFrom && requestsInWindows(peers, window) >= CALL_COUNT_ENOUGH_REQUESTS;
}

/** How long the unmeasured load must still run at `now` (ms; 0 or less: the window is over). */
export function callCountLoadMs(window: { until: number }, now: number): number {
  return window.until + CALL_COUNT_TAIL_MS - now;
}

/**
 * Counting pays off only where a finding can use the counts: event-loop-blocking, which needs the
 * loop busy at least half the time (its BLOCKING_MIN_ELU). A run whose driven threads all stayed
 * under it skips the extra load and is 0.65 s sooner.
 */
export const CALL_COUNT_MIN_ELU = 0.5;

/** Whether any thread's mean loop utilization since `loadStart` (epoch ms) reached CALL_COUNT_MIN_ELU. */
export function loopBusyEnough(threads: readonly { loop: readonly { t: number; elu: number }[] }[], loadStart: number): boolean {
  return threads.some((thread) => {
    const inLoad = thread.loop.filter((r) => r.t >= loadStart);
    if (inLoad.length === 0) return false;
    return inLoad.reduce((sum, r) => sum + r.elu, 0) / inLoad.length >= CALL_COUNT_MIN_ELU;
  });
}
