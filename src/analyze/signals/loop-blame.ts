// When a helper called per item by a loop pays for the work, whether the loop causes it (per-item
// work of its own, or very many calls per call of its own), and the sentence that says so.

import type { Culprit } from '../finding.js';
import type { FunctionCost } from './cpu-view.js';
import type { LoopCaller } from './loop-cause.js';
import { describePath, describePerRequest, type PathStep } from './call-counts.js';
import { round } from './stats.js';

/**
 * The loop is the cause when it does per-item work of its own beside the helper's, at least this
 * share of the two together: many iterations, each cheap (a listing ranker's loop at 12 % beside
 * the normalizer it calls for every listing). A loop of four heavy calls (a rule compiled per
 * rule) spends next to nothing of its own, and the helper's own work is the cause.
 */
export const BLOCKING_LOOP_OWN_MIN_SHARE = 0.08;
/**
 * With call counts (docs/agent.md, Call counts), the loop is the cause too when it calls the
 * helper at least this many times per call of its own, whatever its own share: a loop whose body
 * is only the call spends nothing of its own, yet makes thousands of calls per request (a count
 * the machine's speed does not change, unlike the shares of CPU time).
 */
export const BLOCKING_LOOP_MANY_CALLS = 100;

/**
 * Another helper the same loop calls per item counts with the weighed one when it carries at least
 * this share of its self time: two formatters of one invoice row (a price and a date, each a new
 * Intl formatter per call) split the work near evenly, and which of them leads the profile is noise
 * (36 against 35 % in one run, 38 against 44 % in the next), while the loop's calls to both together
 * are what each request pays for.
 */
export const LOOP_SIBLING_MIN_SHARE = 0.5;

/**
 * `siblingCallsPerCallerCall`: the calls per call of the loop's function that the loop makes to its
 * other helpers (those of LOOP_SIBLING_MIN_SHARE), added to the weighed helper's for the many-calls test.
 */
export function causedByLoop(
  loop: LoopCaller,
  helper: FunctionCost,
  steps: readonly PathStep[] | undefined,
  siblingCallsPerCallerCall = 0,
): boolean {
  const own = loop.callerCost?.selfUs ?? 0;
  if (own + helper.selfUs > 0 && own / (own + helper.selfUs) >= BLOCKING_LOOP_OWN_MIN_SHARE) return true;
  const calls = helperCalls(steps);
  return calls?.perCallerCall !== undefined && calls.perCallerCall + siblingCallsPerCallerCall >= BLOCKING_LOOP_MANY_CALLS;
}

/**
 * The caller must have been counted this many times for the helper's calls per call of it: a call
 * already running when the counters were reset adds its helper calls without its own.
 */
export const LOOP_RATIO_MIN_CALLER_CALLS = 2;

/**
 * The helper's calls per request (the path's last step) and per call of the caller holding the
 * loop (the step above it). The ratio needs no requests: a window too short for calls per request
 * (a starved target) still tells it.
 */
export function helperCalls(steps: readonly PathStep[] | undefined): { perRequest?: number; perCallerCall?: number } | undefined {
  const helper = steps?.at(-1);
  if (!steps || helper === undefined) return undefined;
  const caller = steps.at(-2)?.calls;
  const ratio = caller !== undefined && caller >= LOOP_RATIO_MIN_CALLER_CALLS && helper.calls !== undefined;
  if (helper.callsPerRequest === undefined && !ratio) return undefined;
  return {
    ...(helper.callsPerRequest !== undefined ? { perRequest: helper.callsPerRequest } : {}),
    ...(ratio ? { perCallerCall: round(helper.calls! / caller, 1) } : {}),
  };
}

/** A culprit at another line of its function (no column: the function's own would mislead). */
export function atLine(c: Culprit, line: number): Culprit {
  const { column: _column, ...rest } = c;
  return { ...rest, line };
}

export function describeLoop(loop: LoopCaller, at: Culprit, helper: Culprit, steps: readonly PathStep[]): string {
  const calls = helperCalls(steps);
  const perCall = calls?.perCallerCall !== undefined ? describePerRequest(calls.perCallerCall) : undefined;
  const counted =
    calls?.perRequest !== undefined
      ? ` ${describePerRequest(calls.perRequest)} times per request${perCall !== undefined ? ` (${perCall} per call of ${at.function})` : ''}`
      : perCall !== undefined
        ? ` ${perCall} times per call of ${at.function}`
        : ' for every item';
  return (
    ` ${helper.function} is called${counted} by the loop at ${at.file}:${at.line} in ${at.function} (the call on line ${loop.callLine}): ` +
    `the cost is paid in ${helper.function}, and made by the loop that calls it per item on every request. Path: ${describePath(steps)}.`
  );
}
