// Runs agent work so that nothing ever throws into user code: failures become `agent-error`
// messages (at most a few per kind, so a failing hook cannot flood the socket).
const reported = new Map<string, number>();
const MAX_REPORTS_PER_KIND = 3;

type ErrorSink = (what: string, message: string) => void;
let sink: ErrorSink | undefined;

export function setErrorSink(fn: ErrorSink): void {
  sink = fn;
}

export function reportError(what: string, err: unknown): void {
  try {
    const n = reported.get(what) ?? 0;
    if (n >= MAX_REPORTS_PER_KIND) return;
    reported.set(what, n + 1);
    sink?.(what, err instanceof Error ? err.message : String(err));
  } catch {
    // Reporting must never fail into user code either.
  }
}

/** Calls fn; on failure reports `what` and returns undefined. */
export function safely<T>(what: string, fn: () => T): T | undefined {
  try {
    return fn();
  } catch (err) {
    reportError(what, err);
    return undefined;
  }
}
