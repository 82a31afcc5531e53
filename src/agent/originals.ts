// Pristine references to everything the growth hooks patch, taken when the agent loads
// (before any hook is installed), so the agent's own listeners and timers are never counted.
import { EventEmitter } from 'node:events';
import { timed, timedEvery } from './own-time.js';

export const originalOn = EventEmitter.prototype.on;
export const originalSetTimeout = globalThis.setTimeout;
export const originalSetInterval = globalThis.setInterval;
export const originalClearTimeout = globalThis.clearTimeout;
export const originalClearInterval = globalThis.clearInterval;

/** Adds a listener without going through the listener-growth hook. */
export function listen(emitter: EventEmitter, event: string | symbol, fn: (...args: never[]) => void): void {
  originalOn.call(emitter, event, fn as (...args: unknown[]) => void);
}

/** An unref'd interval the hooks never see; its callbacks' time is the agent's (own-time.ts, a few timed a second). */
export function unrefInterval(fn: () => void, ms: number): NodeJS.Timeout {
  const t = originalSetInterval(timed(fn, timedEvery(ms)), ms);
  t.unref();
  return t;
}
