// Keeps V8 counting calls while a call-count window is open (call-counts.ts). V8 has one coverage
// mode per isolate, and any inspector session that enabled the Profiler domain puts it back to
// best effort when it disables the domain or disconnects (V8ProfilerAgentImpl::disable calls
// stopPreciseCoverage whoever started it). From then on V8 optimizes and inlines again, and a
// take answers with best-effort figures: 1 for every function that ran. A stall's profile or the
// CPU profile's session disconnecting inside the window gave exactly one `search` and one
// `slugify` while 7-35 requests finished (reproduced on Node 20, 22 and 24 with a second session
// enabling the Profiler and disconnecting half-way through the window).
//
// So the agent's Profiler sessions end through endProfilerSession(): at once, or, while a
// window holds the coverage, once the window is read (a session stays connected a second or
// two longer; nothing it gathered waits for it).
import type { Session } from 'node:inspector';

let holds = 0;
let deferred: (() => void)[] = [];

/** A call-count window starts its precise coverage: Profiler sessions end after release. */
export function holdCoverage(): void {
  holds++;
}

/** The window's coverage stopped: the sessions that wanted to end meanwhile end now. */
export function releaseCoverage(): void {
  if (holds === 0) return;
  if (--holds > 0) return;
  const run = deferred;
  deferred = [];
  for (const end of run) end();
}

/** Whether a window holds the coverage now. */
export function coverageHeld(): boolean {
  return holds > 0;
}

/**
 * Ends a session that enabled the Profiler domain (disconnects it, or runs `end`, which must
 * disable the domain or disconnect): at once, or after the window that holds the coverage.
 */
export function endProfilerSession(session: Session, end: () => void = () => disconnectQuietly(session)): void {
  if (holds > 0) deferred.push(end);
  else end();
}

function disconnectQuietly(session: Session): void {
  try {
    session.disconnect();
  } catch {
    // Already disconnected.
  }
}
