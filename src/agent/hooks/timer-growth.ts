// Timers created after listen, by creation site: created, cleared, fired and still pending,
// and the delays they asked for.
// Patches the global and node:timers setTimeout/setInterval/clear* (syncBuiltinESMExports for
// ESM imports). Pending timers are tracked in a bounded map and swept when growth is reported
// (a Timeout is `_destroyed` once it fired or was cleared). Under heavy timer use the creation
// site is sampled 1 in HEAVY_WEIGHT and the counts are scaled. A callback function passed again
// and again (a library's timeout handler: undici sets one per fetch) has its stack captured for
// its first SAMPLE_FIRST timers, then 1 in SAMPLE_EVERY; the others count at the site its last
// capture found. A closure made per timer is a new function each time: always captured.
import type { GrowthBody, GrowthHook } from './growth-hooks.js';
import type { CallSite } from '../protocol.js';
import { threadState } from '../thread-state.js';
import { captureStack, siteKey } from './call-site.js';
import { withSite, MAX_ENTRIES, SAMPLE_EVERY, SAMPLE_FIRST } from './site-counter.js';
import { defineLike } from './wrap.js';

/** Stacks captured per reporting window before sampling starts. */
export const FULL_CAPTURES_PER_WINDOW = 2000;
export const HEAVY_WEIGHT = 16;
/** Node's longest delay; longer ones fire after 1 ms. */
const TIMEOUT_MAX = 2 ** 31 - 1;
/** Timers tracked at once; beyond this, new timers are counted as created only. */
export const MAX_TRACKED = 50_000;

type Kind = 'timeout' | 'interval';
interface Entry { kind: Kind; created: number; cleared: number; fired: number; delayMs: number; site?: CallSite; stack?: CallSite[] }
interface TimerLike { _destroyed?: boolean }
type SetFn = (this: unknown, ...args: unknown[]) => unknown;

export class TimerGrowth implements GrowthHook {
  private readonly entries = new Map<string, Entry>();
  private readonly tracked = new Map<TimerLike, { entry: Entry; weight: number }>();
  private readonly cleared = new WeakSet<object>();
  /** Per callback function: timers set with it, and the entry its last captured stack went to. */
  private readonly byCallback = new WeakMap<Function, { hits: number; entry: Entry }>();
  private windowCaptures = 0;
  private calls = 0;

  install(): void {
    const timers = require('node:timers') as Record<string, SetFn>;
    const g = globalThis as unknown as Record<string, SetFn>;
    for (const [name, kind] of [['setTimeout', 'timeout'], ['setInterval', 'interval']] as const) {
      const wrapped = this.wrapSet(g[name], kind);
      g[name] = wrapped;
      if (timers[name] !== wrapped) timers[name] = wrapped;
    }
    for (const name of ['clearTimeout', 'clearInterval']) {
      const wrapped = this.wrapClear(g[name]);
      g[name] = wrapped;
      timers[name] = wrapped;
    }
    (require('node:module') as { syncBuiltinESMExports(): void }).syncBuiltinESMExports();
  }

  contribute(into: GrowthBody): void {
    this.sweep();
    this.windowCaptures = 0;
    for (const e of this.entries.values()) {
      const pending = Math.max(0, e.created - e.cleared - e.fired);
      into.timers.push(withSite({ kind: e.kind, created: e.created, cleared: e.cleared, fired: e.fired, pending, delayMs: Math.round(e.delayMs) }, e));
    }
  }

  private sweep(): void {
    for (const [timer, t] of this.tracked) {
      if (!timer._destroyed) continue;
      this.tracked.delete(timer);
      if (this.cleared.has(timer)) t.entry.cleared += t.weight;
      else t.entry.fired += t.weight;
    }
  }

  private wrapSet(original: SetFn, kind: Kind): SetFn {
    const self = this;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      const timer = original.apply(this, args);
      if (threadState.listening && threadState.agentBusy === 0) self.record(timer as TimerLike, kind, wrapper, args[1], args[0]);
      return timer;
    };
    // Also copies util.promisify.custom: util.promisify(setTimeout) keeps working.
    defineLike(wrapper, original);
    return wrapper;
  }

  private wrapClear(original: SetFn): SetFn {
    const self = this;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      const timer = args[0];
      if (typeof timer === 'object' && timer !== null) self.cleared.add(timer);
      return original.apply(this, args);
    };
    defineLike(wrapper, original);
    return wrapper;
  }

  private record(timer: TimerLike, kind: Kind, skip: Function, delay: unknown, callback: unknown): void {
    try {
      if (typeof timer !== 'object' || timer === null) return;
      let weight = 1;
      if (this.windowCaptures >= FULL_CAPTURES_PER_WINDOW) {
        if (++this.calls % HEAVY_WEIGHT !== 0) return;
        weight = HEAVY_WEIGHT;
      }
      const fn = typeof callback === 'function' ? callback : undefined;
      const seen = fn !== undefined ? this.byCallback.get(fn) : undefined;
      let e: Entry | undefined;
      if (seen !== undefined && seen.entry.kind === kind && seen.hits >= SAMPLE_FIRST && seen.hits % SAMPLE_EVERY !== 0) {
        seen.hits++;
        e = seen.entry;
      } else {
        e = this.capture(kind, skip);
        if (e === undefined) return;
        if (seen !== undefined) {
          seen.hits++;
          seen.entry = e;
        } else if (fn !== undefined) {
          this.byCallback.set(fn, { hits: 1, entry: e });
        }
      }
      e.created += weight;
      // As node reads it: a number of ms, 1 for anything below 1 or not a finite number.
      const ms = Number(delay);
      e.delayMs += weight * (ms >= 1 && ms <= TIMEOUT_MAX ? ms : 1);
      if (this.tracked.size < MAX_TRACKED) this.tracked.set(timer, { entry: e, weight });
    } catch {
      // Never break setTimeout.
    }
  }

  /** The entry of the site that creates this timer (its stack captured now), or undefined when the entries are full. */
  private capture(kind: Kind, skip: Function): Entry | undefined {
    this.windowCaptures++;
    const stack = captureStack(skip);
    const key = `${kind}\0${siteKey(stack[0])}`;
    let e = this.entries.get(key);
    if (e === undefined) {
      if (this.entries.size >= MAX_ENTRIES) return undefined;
      e = { kind, created: 0, cleared: 0, fired: 0, delayMs: 0 };
      if (stack.length > 0) {
        e.site = stack[0];
        e.stack = stack;
      }
      this.entries.set(key, e);
    }
    return e;
  }
}
