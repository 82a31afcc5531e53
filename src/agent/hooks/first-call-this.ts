// The object an arrow function closes over as `this`, which no scope listing shows (V8's
// `[[Scopes]]` leave `this` out): Hono's `app.fetch` is a class-field arrow whose `this` is the
// app, and it is all @hono/node-server keeps of an app loaded as ES modules. It is caught at the
// function's next call by a breakpoint whose condition hands `this` to the agent and answers
// false (V8 never pauses: the condition is a logpoint's kind of expression), set through an
// in-thread inspector session. The Debugger domain is on from the arming (when the server
// listens) until the call, then off: nothing stays on the request path (script-capture.ts's
// session, at the end of the run, is another one).
import type { Session } from 'node:inspector';

const HAND = 'hotpath.firstCallThis';

/** A function whose `this` is awaited, with what to do with it. */
interface Waiting {
  /** True once `self` was the one awaited (the breakpoint then goes); false: a call from a sibling to look past. */
  take: (self: unknown) => boolean;
  /** Called when the breakpoint is given up without the awaited `this`. */
  lost: (() => void) | undefined;
  breakpointId: string;
  /** Calls looked at and passed over (functions made from the same source share the breakpoint). */
  passed: number;
}

/** Calls of other functions from the same source looked at before a breakpoint is given up. */
export const MAX_PASSED_CALLS = 64;

let session: Session | undefined;
const waiting = new Map<number, Waiting>();
let nextId = 0;

/** Posts to the in-thread session, which answers before `post` returns; undefined on an error. */
function post<T>(s: Session, method: string, params?: object): T | undefined {
  let answer: T | undefined;
  s.post(method, params, (err, res) => {
    if (!err) answer = res as T;
  });
  return answer;
}

/** The condition's side: hands `self` over, then (after the call, never inside the break) removes the breakpoint when done. */
function hand(id: number, self: unknown): void {
  const w = waiting.get(id);
  if (w === undefined) return;
  let done: boolean;
  try {
    done = w.take(self);
  } catch {
    done = true;
  }
  if (!done && ++w.passed < MAX_PASSED_CALLS) return;
  waiting.delete(id);
  queueMicrotask(() => {
    release(w.breakpointId);
    if (!done) w.lost?.();
  });
}

/** Removes a breakpoint; the domain and the session go with the last one. */
function release(breakpointId: string): void {
  try {
    if (session !== undefined) post(session, 'Debugger.removeBreakpoint', { breakpointId });
  } catch {
    // Already gone.
  }
  closeIfIdle();
}

/** With no breakpoint left: the Debugger domain off, the session and the condition's hand gone. */
function closeIfIdle(): void {
  if (waiting.size > 0 || session === undefined) return;
  const s = session;
  session = undefined;
  delete (globalThis as Record<symbol, unknown>)[Symbol.for(HAND)];
  try {
    post(s, 'Debugger.disable');
    s.disconnect();
  } catch {
    // Already gone.
  }
}

/**
 * Arms a breakpoint on `fn`'s calls that hands `take` the `this` of each call until it answers
 * true (calls of functions made from the same source hit it too: `take` tells them apart), or
 * MAX_PASSED_CALLS were passed over (then `lost` is called). False when it cannot be armed (no
 * inspector, a refused session, a second breakpoint on the same source): nothing is left on.
 */
export function onNextCallThis(fn: Function, take: (self: unknown) => boolean, lost?: () => void): boolean {
  const g = globalThis as Record<symbol, unknown>;
  const key = Symbol.for(HAND);
  try {
    const inspector = (process.getBuiltinModule?.('node:inspector') ?? require('node:inspector')) as typeof import('node:inspector');
    if (session === undefined) {
      const s = new inspector.Session();
      s.connect();
      if (post(s, 'Debugger.enable') === undefined) {
        s.disconnect();
        return false;
      }
      session = s;
    }
    g[key] = hand;
    const id = nextId++;
    const fetch = `globalThis[Symbol.for(${JSON.stringify(HAND)})]`;
    g[Symbol.for(`${HAND}.fn`)] = fn;
    const objectId = post<{ result?: { objectId?: string } }>(session, 'Runtime.evaluate', {
      expression: `globalThis[Symbol.for(${JSON.stringify(`${HAND}.fn`)})]`,
    })?.result?.objectId;
    delete g[Symbol.for(`${HAND}.fn`)];
    const set =
      objectId === undefined
        ? undefined
        : post<{ breakpointId?: string }>(session, 'Debugger.setBreakpointOnFunctionCall', {
            objectId,
            condition: `(typeof ${fetch} === 'function' && ${fetch}(${id}, this), false)`,
          });
    if (objectId !== undefined) post(session, 'Runtime.releaseObject', { objectId });
    if (set?.breakpointId === undefined) {
      closeIfIdle();
      return false;
    }
    waiting.set(id, { take, lost, breakpointId: set.breakpointId, passed: 0 });
    return true;
  } catch {
    closeIfIdle();
    return false;
  }
}
