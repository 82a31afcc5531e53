// Where requests wait for a slot: when io-wait finds requests queueing for a few waits (a pool,
// a semaphore, a lock), the wait for the slot is a promise another request resolves when it
// releases one, which no hook sees. The functions on the way to the waits the agent timed are
// read instead: the nearest `await` before the call, in the same function (from where V8 says
// the function starts), is where a request stood until a slot freed up (`await pool.acquire()`
// and then the query on the connection it got).

import type { RunData } from '../../run-dir/run-data.js';
import type { CallSite } from '../../agent/protocol.js';
import { runSourceLine } from '../../profile/run-source-maps.js';
import { isAppSite } from './culprit.js';

/** A function longer than this above the call is not searched (its start may be wrong). */
export const SLOT_WAIT_MAX_LINES = 60;

export interface SlotWait {
  /** The frame whose function awaits the slot, at the line of the await. */
  site: CallSite;
  /** The awaited expression as written, e.g. `pool.checkout()`. */
  awaited: string;
}

/** The first frame of `chain` (the waits' site, then its callers) whose function awaits something before the call. */
export function slotWait(run: RunData, chain: readonly (CallSite | undefined)[]): SlotWait | undefined {
  for (const frame of chain) {
    if (!isAppSite(frame) || frame.functionLine === undefined || frame.functionLine > frame.line) continue;
    if (frame.line - frame.functionLine > SLOT_WAIT_MAX_LINES) continue;
    for (let line = frame.line - 1; line >= frame.functionLine; line--) {
      const awaited = awaitedOn(runSourceLine(run, frame.file, line));
      if (awaited !== undefined) return { site: { ...frame, line, column: 1 }, awaited };
    }
  }
  return undefined;
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
