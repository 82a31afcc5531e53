// Where requests wait for a slot: when io-wait finds requests queueing for a few waits (a pool,
// a semaphore, a lock), the wait for the slot is a promise another request resolves when it
// releases one, which no hook sees. The functions on the way to the waits the agent timed are
// read instead: the nearest `await` before the call, in the same function (from where V8 says
// the function starts), is where a request stood until a slot freed up (`await pool.acquire()`
// and then the query on the connection it got). A pool whose waiters are callbacks (generic-pool
// style, `async.queue`) has no `await`: the I/O is made from a callback handed to the app function
// that hands out slots (`acquire(cb)`), which called it at once while a slot was free (the frame
// above the callback on the stack): that call is where requests wait. A limiter that takes the
// I/O as a task (`await limit(() => fetchProfile(id))`, p-limit, p-queue's `add`, a mutex's
// `runExclusive`) runs it later from its own queue, not from the call it was handed to: the
// callback's first line awaiting that call (or returning it to a caller that awaits it) is where
// requests wait.

import type { RunData } from '../../run-dir/run-data.js';
import type { CallSite } from '../../agent/protocol.js';
import { runSourceLine } from '../../profile/run-source-maps.js';
import { isAppSite } from './culprit.js';
import { ownerOf } from '../../profile/anonymous-names.js';

/** A function longer than this above the call is not searched (its start may be wrong). */
export const SLOT_WAIT_MAX_LINES = 60;

export interface SlotWait {
  /** The frame whose function awaits the slot, at the line of the await. */
  site: CallSite;
  /** The awaited expression as written, e.g. `pool.checkout()`; for a callback's gate, its call: `pool.acquire(callback)`. */
  awaited: string;
  /** No `await` on the line: the slot is handed to a callback, or the gated promise is returned to a caller that awaits it. */
  callback?: boolean;
}

/** The first frame of `chain` (the waits' site, then its callers) whose function awaits something before the call. */
export function slotWait(run: RunData, chain: readonly (CallSite | undefined)[]): SlotWait | undefined {
  for (const frame of chain) {
    if (!isAppSite(frame) || frame.functionLine === undefined || frame.functionLine > frame.line) continue;
    const task = awaitedTask(run, frame);
    if (task !== undefined) return task;
    if (frame.line - frame.functionLine > SLOT_WAIT_MAX_LINES) continue;
    for (let line = frame.line - 1; line >= frame.functionLine; line--) {
      const awaited = awaitedOn(runSourceLine(run, frame.file, line));
      if (awaited !== undefined) return { site: { ...frame, line, column: 1 }, awaited };
    }
  }
  for (let i = 0; i < chain.length - 1; i++) {
    const gate = callbackGate(run, chain, i);
    if (gate !== undefined) return gate;
  }
  return undefined;
}

/**
 * `frame`'s function as a task handed to an awaited call on the line where it starts
 * (`const p = await limit(() => getJson(url))`): the awaited call is where the request stood until
 * the limiter ran the task. The site is that line in the function the callback was written in
 * (named by the function ranges: "(anonymous in f)" is f's). `new Promise(...)` is no gate: its
 * executor runs at once, wrapping the I/O itself.
 */
function awaitedTask(run: RunData, frame: CallSite): SlotWait | undefined {
  if (frame.functionLine === undefined || frame.functionColumn === undefined) return undefined;
  const text = runSourceLine(run, frame.file, frame.functionLine);
  const handed = text === undefined ? undefined : awaitedCallee(text, frame.functionColumn);
  if (text === undefined || handed === undefined) return undefined;
  const returned = handed.keyword === 'return';
  const awaited = returned ? returnedOn(text) : awaitedOn(text);
  if (awaited === undefined) return undefined;
  const owner = ownerOf(frame.function);
  return { site: { ...frame, function: owner, line: frame.functionLine, column: 1 }, awaited, ...(returned ? { callback: true } : {}) };
}

/**
 * The call a callback starting at `column` (1-based) of `text` is handed to, when that call is
 * awaited or returned (to a caller that awaits it): `limit` in `await limit(() => ...` and in
 * `return limit(() => ...`.
 */
export function awaitedCallee(text: string, column: number): { callee: string; keyword: 'await' | 'return' } | undefined {
  if (column < 2) return undefined;
  const m = /\b(await|return)\s+([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\(\s*(?:[^()]*,\s*)?(?:async\s+)?(?:function\b[^(]*)?$/.exec(
    text.slice(0, column - 1),
  );
  return m ? { callee: m[2], keyword: m[1] as 'await' | 'return' } : undefined;
}

/** The expression a line returns, without the trailing `;`. */
function returnedOn(text: string): string | undefined {
  const m = /\breturn\s+(.+?)\s*;?\s*$/.exec(text.replace(/\/\/.*$/, ''));
  if (!m) return undefined;
  const expr = m[1].replace(/[;,]\s*$/, '');
  return expr.length > 80 ? `${expr.slice(0, 77)}...` : expr;
}

/**
 * `chain[i]`'s function as a callback handed to the app function that called it (`chain[i + 1]`):
 * the call it is written in (`acquire(() => ...)`, on the line where the callback starts, just
 * before it) names that function. The wait is at that call, in the function that made it (a frame
 * further up on that line), else on the callback's line.
 */
function callbackGate(run: RunData, chain: readonly (CallSite | undefined)[], i: number): SlotWait | undefined {
  const frame = chain[i];
  const gate = chain[i + 1];
  if (!isAppSite(frame) || !isAppSite(gate) || frame.functionLine === undefined || frame.functionColumn === undefined) return undefined;
  const callee = calleeBefore(runSourceLine(run, frame.file, frame.functionLine), frame.functionColumn);
  if (callee === undefined) return undefined;
  const name = callee.split('.').pop()!;
  if (gate.function !== name && !gate.function.endsWith(`.${name}`)) return undefined;
  const caller = chain.slice(i + 2).find((f) => f !== undefined && f.file === frame.file && f.line === frame.functionLine);
  const site = caller ?? frame;
  return { site: { ...site, line: frame.functionLine, column: 1 }, awaited: `${callee}(callback)`, callback: true };
}

/** The function called with a callback that starts at `column` (1-based) of `text`: `pool.acquire` in `pool.acquire((err, c) => ...`. */
export function calleeBefore(text: string | undefined, column: number): string | undefined {
  if (text === undefined || column < 2) return undefined;
  const m = /([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\(\s*(?:[^()]*,\s*)?(?:async\s+)?(?:function\b[^(]*)?$/.exec(
    text.slice(0, column - 1),
  );
  return m?.[1];
}

/** The expression a line awaits, without the trailing `;`; undefined when it awaits nothing. */
export function awaitedOn(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const code = text.replace(/\/\/.*$/, '');
  const m = /\bawait\s+(.+?)\s*;?\s*$/.exec(code);
  if (!m) return undefined;
  const expr = m[1].replace(/[;,]\s*$/, '');
  return expr.length > 80 ? `${expr.slice(0, 77)}...` : expr;
}
