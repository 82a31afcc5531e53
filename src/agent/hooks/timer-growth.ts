// Timers created after listen, by creation site: created, cleared, fired and still pending,
// and the delays they asked for.
// Patches the global and node:timers setTimeout/setInterval/clear*, and timers/promises'
// setTimeout/setInterval (syncBuiltinESMExports for ESM imports). Pending timers are tracked in
// a bounded map and swept when growth is reported (a Timeout is `_destroyed` once it fired or
// was cleared; a timers/promises timeout has fired once its delay ran out, unless its signal
// aborted it). A stack capture costs 5-30 µs (more with a deep heap and many pending
// promises), so they are budgeted: FULL_CAPTURES_PER_WINDOW per reporting window, then a
// random sample of the timers (1 in `every`, counts scaled) sized from the last window's rate
// to about SAMPLES_PER_WINDOW more. A callback function passed again and again (a library's
// timeout handler: undici sets one per fetch) has its stack captured for its first
// SAMPLE_FIRST timers, then 1 in SAMPLE_EVERY, the others counted at the site its captures found;
// one passed from several sites is captured every time. A closure made per timer (a promise's
// resolve function) is a new function each time.
import { performance } from 'node:perf_hooks';
import type { GrowthBody, GrowthHook } from './growth-hooks.js';
import type { CallSite } from '../protocol.js';
import { threadState } from '../thread-state.js';
import { captureStack, siteKey } from './call-site.js';
import { withSite, MAX_ENTRIES, SAMPLE_EVERY, SAMPLE_FIRST } from './site-counter.js';
import { newVariants, noteVariant, type StackVariants } from './stack-variants.js';
import { defineLike } from './wrap.js';

/**
 * Timers recorded with a stack capture per reporting window (about a second) before sampling
 * starts. It was 2,000: a poller re-arming `await sleep(1000)` per request (tens of thousands
 * of timers a second, each with a new resolve function) spent 14-18 % of its CPU in captures.
 */
export const FULL_CAPTURES_PER_WINDOW = 100;
/** Past the budget, 1 timer in at least this many is recorded (with this weight). */
export const HEAVY_WEIGHT = 16;
/** ...or in more, so that the last window's rate gives about this many sampled timers a window. */
export const SAMPLES_PER_WINDOW = 100;
/** Node's longest delay; longer ones fire after 1 ms. */
const TIMEOUT_MAX = 2 ** 31 - 1;
/** Timers tracked at once; beyond this, new timers are counted as created only. */
export const MAX_TRACKED = 50_000;

type Kind = 'timeout' | 'interval';
interface Entry {
  kind: Kind;
  created: number;
  cleared: number;
  fired: number;
  delayMs: number;
  site?: CallSite;
  stack?: CallSite[];
  /** The paths the site was reached by (stack-variants.ts): `stack` is the most common one's. */
  paths?: StackVariants;
  promise?: boolean;
  awaited?: boolean;
}
interface TimerLike {
  _destroyed?: boolean;
}
/** A timers/promises timer: a timeout is due at `due` (performance.now()); an interval ends when its iterator returns. */
interface PromiseTimer {
  entry: Entry;
  weight: number;
  due: number;
  signal?: { aborted?: boolean };
  ended?: boolean;
}
type SetFn = (this: unknown, ...args: unknown[]) => unknown;
/**
 * Per callback function: timers set with it, the entry its captures went to, and whether they went
 * to more than one. A callback passed from two sites (a retry scheduled once by the request, then
 * by itself) has every sampled timer captured: counting the uncaptured ones at the last capture's
 * site moved them between the two in blocks of 64, and drawing one of the latest sites at random
 * left each site's pending count too noisy to trend. The timers sampled per window bound those
 * captures.
 */
interface CallbackSites {
  hits: number;
  entry: Entry;
  multiSite: boolean;
}

export class TimerGrowth implements GrowthHook {
  private readonly entries = new Map<string, Entry>();
  private readonly tracked = new Map<TimerLike, { entry: Entry; weight: number }>();
  private readonly promised = new Map<object, PromiseTimer>();
  private readonly cleared = new WeakSet<object>();
  private readonly byCallback = new WeakMap<Function, CallbackSites>();
  private windowCaptures = 0;
  private windowCalls = 0;
  /** Past the capture budget, a timer is recorded when a draw of the xorshift generator (uint32) is below this. */
  private every = HEAVY_WEIGHT;
  private sampleBelow = 2 ** 32 / HEAVY_WEIGHT;
  private rng = 0x2545f491;

  install(): void {
    const timers = require('node:timers') as Record<string, SetFn>;
    const g = globalThis as unknown as Record<string, SetFn>;
    for (const [name, kind] of [
      ['setTimeout', 'timeout'],
      ['setInterval', 'interval'],
    ] as const) {
      const wrapped = this.wrapSet(g[name], kind);
      g[name] = wrapped;
      if (timers[name] !== wrapped) timers[name] = wrapped;
    }
    for (const name of ['clearTimeout', 'clearInterval']) {
      const wrapped = this.wrapClear(g[name]);
      g[name] = wrapped;
      timers[name] = wrapped;
    }
    // util.promisify(setTimeout) reads timers/promises' export when called: it gets the wrapper too.
    const promises = require('node:timers/promises') as Record<string, SetFn>;
    for (const [name, kind] of [
      ['setTimeout', 'timeout'],
      ['setInterval', 'interval'],
    ] as const) {
      if (typeof promises[name] === 'function') promises[name] = this.wrapPromised(promises[name], kind);
    }
    (require('node:module') as { syncBuiltinESMExports(): void }).syncBuiltinESMExports();
  }

  contribute(into: GrowthBody): void {
    this.sweep();
    this.windowCaptures = 0;
    this.every = Math.max(HEAVY_WEIGHT, Math.ceil(this.windowCalls / SAMPLES_PER_WINDOW));
    this.sampleBelow = 2 ** 32 / this.every;
    this.windowCalls = 0;
    for (const e of this.entries.values()) {
      const pending = Math.max(0, e.created - e.cleared - e.fired);
      into.timers.push(
        withSite(
          {
            kind: e.kind,
            created: e.created,
            cleared: e.cleared,
            fired: e.fired,
            pending,
            delayMs: Math.round(e.delayMs),
            ...(e.promise ? { promise: true } : {}),
            ...(e.awaited ? { awaited: true } : {}),
          },
          e,
        ),
      );
    }
  }

  private sweep(): void {
    for (const [timer, t] of this.tracked) {
      if (!timer._destroyed) continue;
      this.tracked.delete(timer);
      if (this.cleared.has(timer)) t.entry.cleared += t.weight;
      else t.entry.fired += t.weight;
    }
    const now = performance.now();
    for (const [key, t] of this.promised) {
      if (t.signal?.aborted === true || t.ended === true) t.entry.cleared += t.weight;
      else if (t.due <= now) t.entry.fired += t.weight;
      else continue;
      this.promised.delete(key);
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

  /** timers/promises: setTimeout(delay, value, options) returns a promise, setInterval an async iterator. */
  private wrapPromised(original: SetFn, kind: Kind): SetFn {
    const self = this;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      const made = original.apply(this, args);
      if (threadState.listening && threadState.agentBusy === 0) self.recordPromised(made, kind, wrapper, args[0], args[2]);
      return made;
    };
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

  /** The weight to record this timer with, or 0 when it is left out of the sample. */
  private weight(): number {
    this.windowCalls++;
    if (this.windowCaptures < FULL_CAPTURES_PER_WINDOW) return 1;
    return this.draw() < this.sampleBelow ? this.every : 0;
  }

  /** A uint32 from the xorshift generator. */
  private draw(): number {
    let x = this.rng;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.rng = x;
    return x >>> 0;
  }

  private record(timer: TimerLike, kind: Kind, skip: Function, delay: unknown, callback: unknown): void {
    try {
      if (typeof timer !== 'object' || timer === null) return;
      const weight = this.weight();
      if (weight === 0) return;
      const fn = typeof callback === 'function' ? callback : undefined;
      const seen = fn !== undefined ? this.byCallback.get(fn) : undefined;
      let e: Entry | undefined;
      if (
        seen !== undefined &&
        !seen.multiSite &&
        seen.entry.kind === kind &&
        seen.hits >= SAMPLE_FIRST &&
        seen.hits % SAMPLE_EVERY !== 0
      ) {
        seen.hits++;
        e = seen.entry;
      } else {
        e = this.capture(kind, skip);
        if (e === undefined) return;
        if (seen !== undefined) {
          seen.hits++;
          if (e !== seen.entry) seen.multiSite = true;
          seen.entry = e;
        } else if (fn !== undefined) {
          if (isResolveFunction(fn)) e.awaited = true;
          // A resolve function is made for this one timer: caching it would only cost a WeakMap entry.
          else this.byCallback.set(fn, { hits: 1, entry: e, multiSite: false });
        }
      }
      e.created += weight;
      e.delayMs += weight * delayOf(delay);
      if (this.tracked.size < MAX_TRACKED) this.tracked.set(timer, { entry: e, weight });
    } catch {
      // Never break setTimeout.
    }
  }

  private recordPromised(made: unknown, kind: Kind, skip: Function, delay: unknown, options: unknown): void {
    try {
      if (typeof made !== 'object' || made === null) return;
      const weight = this.weight();
      if (weight === 0) return;
      const e = this.capture(kind, skip);
      if (e === undefined) return;
      e.promise = true;
      const ms = delayOf(delay);
      e.created += weight;
      e.delayMs += weight * ms;
      if (this.tracked.size + this.promised.size >= MAX_TRACKED) return;
      const signal = typeof options === 'object' && options !== null ? (options as { signal?: { aborted?: boolean } }).signal : undefined;
      const t: PromiseTimer = {
        entry: e,
        weight,
        due: kind === 'timeout' ? performance.now() + ms : Infinity,
        ...(signal ? { signal } : {}),
      };
      if (kind === 'interval') endsOnReturn(made as AsyncIterator<unknown>, t);
      this.promised.set(made, t);
    } catch {
      // Never break timers/promises.
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
        e.paths = newVariants();
        noteVariant(e.paths, stack);
      }
      this.entries.set(key, e);
    } else if (e.paths !== undefined && stack.length > 0) {
      // The path most captures came by (a loop re-arming its timer from a resumed async function
      // shows the loop's own function at the bottom, not whatever started the loop).
      e.stack = noteVariant(e.paths, stack);
    }
    return e;
  }
}

/** As node reads a delay: a number of ms, 1 for anything below 1 or not a finite number. */
function delayOf(delay: unknown): number {
  const ms = Number(delay);
  return ms >= 1 && ms <= TIMEOUT_MAX ? ms : 1;
}

/**
 * A promise's resolve (or reject) function: anonymous, native, no prototype. The timer it is
 * passed to is a sleep (`new Promise((r) => setTimeout(r, ms))`), awaited by whoever called
 * the function that made the promise.
 */
function isResolveFunction(fn: Function): boolean {
  return (
    fn.name === '' &&
    !Object.prototype.hasOwnProperty.call(fn, 'prototype') &&
    Function.prototype.toString.call(fn) === 'function () { [native code] }'
  );
}

/** A timers/promises interval ends when its iterator returns (a `break` out of `for await`) or throws. */
function endsOnReturn(it: AsyncIterator<unknown>, t: PromiseTimer): void {
  for (const name of ['return', 'throw'] as const) {
    const original = it[name];
    if (typeof original !== 'function') continue;
    Object.defineProperty(it, name, {
      configurable: true,
      writable: true,
      enumerable: false,
      value: function (this: unknown, ...args: unknown[]) {
        t.ended = true;
        return (original as Function).apply(this, args);
      },
    });
  }
}
