// When the measured load left requests unanswered, the extra load after it (the call-count
// window's, src/run/call-count-window.ts) also serves to see where requests are dropped: the
// agents follow the exceptions the app throws meanwhile (agent/profiling/throw-watch.ts). A path
// that drops a request holds its connection until the client gives up, so the extra load, on
// connections of its own, shows its first drops only: it starts once the agents follow the
// exceptions, and lasts THROW_WATCH_MIN_MS at least.

/** How long the CLI waits for the agents to say they follow the exceptions before it drives the extra load anyway. */
export const THROW_WATCH_WAIT_MS = 1000;
/** Extra load driven while the exceptions are followed, at least (the window's latest end bounds it). */
export const THROW_WATCH_MIN_MS = 500;
const POLL_MS = 20;

interface Peer {
  pid: number;
  threadId: number;
  loop: readonly unknown[];
  throwWatchStart?: number;
}

/**
 * Whether every thread that samples its loop (the driven ones) follows the exceptions: its agent
 * worker says so on a connection of its own, matched by pid and thread id.
 */
export function throwWatchReady(peers: readonly Peer[]): boolean {
  const open = new Set(peers.filter((p) => p.throwWatchStart !== undefined).map((p) => `${p.pid}:${p.threadId}`));
  const sampling = peers.filter((p) => p.loop.length > 0);
  return sampling.length > 0 && sampling.every((p) => open.has(`${p.pid}:${p.threadId}`));
}

/** Resolves once throwWatchReady, after THROW_WATCH_WAIT_MS, or when `signal` aborts. */
export function throwWatchOpened(peers: () => readonly Peer[], signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const started = Date.now();
    const check = (): void => {
      if (signal.aborted || throwWatchReady(peers()) || Date.now() - started >= THROW_WATCH_WAIT_MS) return resolve();
      setTimeout(check, POLL_MS);
    };
    check();
  });
}
