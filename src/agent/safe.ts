// Runs agent work so that nothing ever throws into user code: failures become `agent-error`
// messages, each kind reported once (a failing hook cannot flood the socket).
//
// Two levels: `safely` guards one call (a control message, one sample); `guardPart` guards a
// named part of the agent (a collector, a hook, the profiler): the first failure disables that
// part for the rest of the process and is reported once with its name (`what`), while every
// other part keeps running.
const reported = new Set<string>();
const failedParts = new Set<string>();

type ErrorSink = (what: string, message: string) => void;
let sink: ErrorSink | undefined;

export function setErrorSink(fn: ErrorSink): void {
  sink = fn;
}

/** Reports `what` failed, once per `what`. */
export function reportError(what: string, err: unknown): void {
  try {
    if (reported.has(what)) return;
    reported.add(what);
    sink?.(what, describeError(err));
  } catch {
    // Reporting must never fail into user code either.
  }
}

function describeError(err: unknown): string {
  try {
    return err instanceof Error ? String(err.message) : String(err);
  } catch {
    // A hostile error object (a getter that throws, a Proxy): its text is not worth a failure.
    return 'unprintable error';
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

/**
 * Calls fn as part `part` of the agent, unless that part already failed: a failure disables it
 * (later calls do nothing and return undefined) and is reported once as `what` = part.
 */
export function guardPart<T>(part: string, fn: () => T): T | undefined {
  if (failedParts.has(part)) return undefined;
  try {
    return fn();
  } catch (err) {
    failedParts.add(part);
    reportError(part, err);
    return undefined;
  }
}

/** Whether a part failed (and is disabled). */
export function partFailed(part: string): boolean {
  return failedParts.has(part);
}
