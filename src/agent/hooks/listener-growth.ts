// Listener additions after listen, per emitter class and event (EventEmitter.prototype.on /
// addListener / prependListener; once() goes through them), except on node's per-request
// IncomingMessage and ServerResponse, whose listeners die with the request. Tracks the largest listener count
// seen on one emitter of the class, and samples the adding call site at each new maximum
// (first SAMPLE_FIRST, then 1 in SAMPLE_EVERY): a listener added per request shows as a count
// that grows with the requests, with the site that adds it (docs/architecture.md, case 1). Each report
// also says how many listeners the emitter of the maximum still holds (a weak reference):
// a leak keeps them, a pile-up under concurrency does not; and the limit that emitter has for
// the MaxListenersExceededWarning (its own or the default), with the site that lifted its own.
import { EventEmitter } from 'node:events';
import type { GrowthBody, GrowthHook } from './growth-hooks.js';
import type { CallSite } from '../protocol.js';
import { threadState } from '../thread-state.js';
import { captureStack } from './call-site.js';
import { SAMPLE_FIRST, SAMPLE_EVERY, MAX_ENTRIES, withSite } from './site-counter.js';
import { defineLike } from './wrap.js';
import { ownTimeEnd, ownTimeStart } from '../own-time.js';

interface Entry {
  emitter: string;
  event: string;
  count: number;
  added: number;
  maxima: number;
  site?: CallSite;
  stack?: CallSite[];
  /** The emitter that holds the maximum, and its event key (a symbol stays a symbol here). */
  holder?: WeakRef<EventEmitter>;
  key?: string | symbol;
  /** The listener added at the last new maximum came through once() (events.once, emitter.once). */
  once?: boolean;
}

/** Where an emitter's own limit was lifted (max-listeners.ts). */
export interface LiftedLimits {
  liftedAt(emitter: object): CallSite | null | undefined;
}

type AddFn = (this: EventEmitter, event: string | symbol, listener: (...args: unknown[]) => void) => EventEmitter;

export class ListenerGrowth implements GrowthHook {
  private readonly entries = new Map<string, Entry>();
  /** Constructor -> event -> entry: the cache the hot path reads (bounded like `entries`). */
  private readonly byClass = new Map<Function | undefined, Map<string | symbol, Entry>>();
  private readonly byName = new Map<string, Map<string | symbol, Entry>>();
  /**
   * node's per-request objects (IncomingMessage, ServerResponse; Express's req and res inherit
   * their constructors): listeners on them die with the request, so they cannot leak, and node
   * itself adds two per request. Skipped by one constructor comparison each; set at listen.
   */
  private perRequestA: Function | undefined;
  private perRequestB: Function | undefined;

  constructor(private readonly limits?: LiftedLimits) {}

  install(): void {
    const proto = EventEmitter.prototype as unknown as Record<string, AddFn>;
    const on = this.wrap(proto.on);
    proto.on = on;
    proto.addListener = on;
    proto.prependListener = this.wrap(proto.prependListener);
  }

  onListen(): void {
    const http = require('node:http') as typeof import('node:http');
    this.perRequestA = http.IncomingMessage;
    this.perRequestB = http.ServerResponse;
  }

  contribute(into: GrowthBody): void {
    for (const e of this.entries.values()) {
      const row: GrowthBody['listeners'][number] = {
        emitter: e.emitter,
        event: e.event,
        count: e.count,
        added: e.added,
        ...(e.once === true ? { once: true } : {}),
      };
      const holder = e.holder?.deref();
      if (holder !== undefined && e.key !== undefined) {
        row.current = listenersNow(holder, e.key);
        this.addLimit(row, holder);
      }
      into.listeners.push(withSite(row, e));
    }
  }

  /** The holder's limit now: its own (setMaxListeners) or the default; where its own was lifted. */
  private addLimit(row: GrowthBody['listeners'][number], holder: EventEmitter): void {
    try {
      if (typeof holder.getMaxListeners !== 'function') return;
      const limit = holder.getMaxListeners();
      if (typeof limit !== 'number') return;
      const own = (holder as unknown as { _maxListeners?: unknown })._maxListeners !== undefined;
      row.maxListeners = limit;
      row.maxListenersOwn = own;
      const site = own && (limit === 0 || limit === Infinity) ? this.limits?.liftedAt(holder) : undefined;
      if (site) row.maxListenersSite = site;
    } catch {
      // An emitter with an unusual getMaxListeners: no limit reported.
    }
  }

  private eventsOf(ctor: Function | undefined): Map<string | symbol, Entry> {
    const name = (ctor as { name?: string } | undefined)?.name || 'Object';
    let events = this.byName.get(name);
    if (events === undefined) {
      events = new Map();
      this.byName.set(name, events);
    }
    if (this.byClass.size < MAX_ENTRIES) this.byClass.set(ctor, events);
    return events;
  }

  private entryOf(events: Map<string | symbol, Entry>, ctor: Function | undefined, event: string | symbol): Entry | undefined {
    const name = (ctor as { name?: string } | undefined)?.name || 'Object';
    const ev = typeof event === 'symbol' ? event.toString() : event;
    const key = `${name}\0${ev}`;
    let e = this.entries.get(key);
    if (e === undefined) {
      if (this.entries.size >= MAX_ENTRIES) return undefined;
      e = { emitter: name, event: ev, count: 0, added: 0, maxima: 0 };
      this.entries.set(key, e);
    }
    // Symbols with the same description share a key: cache at most MAX_ENTRIES events per class.
    if (events.size < MAX_ENTRIES) events.set(event, e);
    return e;
  }

  private wrap(original: AddFn): AddFn {
    const self = this;
    const wrapper = function (this: EventEmitter, event: string | symbol, listener: (...args: unknown[]) => void): EventEmitter {
      const result = original.call(this, event, listener);
      if (!threadState.listening || threadState.agentBusy !== 0) return result;
      // One call in OWN_TIME_EVERY is timed as the agent's own time (own-time.ts).
      const t0 = ownTimeStart();
      // One listener for the event on this emitter is no leak: most additions stop here, among
      // them the 'close' listener node adds to the socket for every response and then removes.
      const n = listenersNow(this, event);
      if (n >= 2) {
        const ctor = this.constructor;
        if (ctor !== self.perRequestA && ctor !== self.perRequestB) self.record(this, event, listener, wrapper, n);
      }
      ownTimeEnd(t0);
      return result;
    };
    defineLike(wrapper, original);
    return wrapper;
  }

  /**
   * The path of every `on` after listen that leaves two or more listeners: two Map lookups keyed
   * by the constructor and the event, no string building. Classes that share a
   * name share their entries, as the protocol reports them by name.
   */
  private record(emitter: EventEmitter, event: string | symbol, listener: unknown, skip: Function, n: number): void {
    try {
      const ctor = emitter.constructor as Function | undefined;
      let events = this.byClass.get(ctor);
      if (events === undefined) events = this.eventsOf(ctor);
      let e = events.get(event);
      if (e === undefined) e = this.entryOf(events, ctor, event);
      if (e === undefined) return;
      e.added++;
      // A new maximum (rare): worth the lookup that leaves out the agent's own emitters.
      if (n <= e.count || threadState.agentOwned.has(emitter)) return;
      e.count = n;
      if (e.holder?.deref() !== emitter) e.holder = new WeakRef(emitter);
      e.key = event;
      // once() adds a wrapper that holds the real listener as `.listener`.
      e.once = typeof (listener as { listener?: unknown } | undefined)?.listener === 'function';
      if (e.maxima++ < SAMPLE_FIRST || e.maxima % SAMPLE_EVERY === 0) {
        const stack = captureStack(skip);
        if (stack.length > 0) {
          e.site = stack[0];
          e.stack = stack;
        }
      }
    } catch {
      // Never break addListener.
    }
  }
}

/**
 * Listeners for `event` on `emitter` right after an addition: EventEmitter keeps one as a
 * function and several as an array in `_events` (read directly: a method call per `on` showed in
 * the server's profile); `listenerCount` when an emitter keeps them elsewhere.
 */
function listenersNow(emitter: EventEmitter, event: string | symbol): number {
  const events = (emitter as unknown as { _events?: Record<string | symbol, unknown> })._events;
  const l = events === undefined || events === null ? undefined : events[event];
  if (typeof l === 'function') return 1;
  if (Array.isArray(l)) return l.length;
  return typeof emitter.listenerCount === 'function' ? emitter.listenerCount(event) : 0;
}
