// Catches the MaxListenersExceededWarning being switched off, at any time (modules do it at
// require time): `require('events').defaultMaxListeners = Infinity` (through a Proxy of the
// events module handed to CommonJS require, since the property is not configurable),
// `EventEmitter.setMaxListeners(0|Infinity)` and `emitter.setMaxListeners(0|Infinity)`, each
// with its call site. A change made where the Proxy cannot see it (ESM import of
// node:events) is still noticed by polling, without a site. The emitters whose own limit was
// lifted are remembered weakly with the site (`liftedAt`), so the listener hook can say whether
// the emitter that leaks is one of them (a framework lifting its own emitter's limit silences
// nothing on the app's).
import { EventEmitter } from 'node:events';
import type { GrowthBody, GrowthHook } from './growth-hooks.js';
import type { CallSite } from '../protocol.js';
import { calledByNode, captureStack } from './call-site.js';
import { defineLike } from './wrap.js';

interface Entry {
  what: string;
  value: number;
  site?: CallSite;
  stack?: CallSite[];
}
const MAX_ENTRIES = 100;

function disables(n: unknown): n is number {
  return n === 0 || n === Infinity;
}

export class MaxListeners implements GrowthHook {
  private readonly entries = new Map<string, Entry>();
  private readonly initialDefault = EventEmitter.defaultMaxListeners;
  /** Emitters whose own limit was lifted, with where (null: no site). Weak: emitters come and go. */
  private readonly lifted = new WeakMap<object, CallSite | null>();
  private defaultSeen = false;

  install(): void {
    this.patchInstanceMethod();
    this.patchStaticMethod();
    this.proxyRequire();
  }

  contribute(into: GrowthBody): void {
    const now = EventEmitter.defaultMaxListeners;
    if (!this.defaultSeen && now !== this.initialDefault && disables(now)) this.add('events.defaultMaxListeners', now, []);
    for (const e of this.entries.values()) {
      const row: GrowthBody['maxListenersDisabled'][number] = { what: e.what, value: e.value };
      if (e.site !== undefined) {
        row.site = e.site;
        row.stack = e.stack;
      }
      into.maxListenersDisabled.push(row);
    }
  }

  /** Where setMaxListeners(0|Infinity) was last called on this emitter (undefined: not seen, or raised again since). */
  liftedAt(emitter: object): CallSite | null | undefined {
    return this.lifted.get(emitter);
  }

  private remember(emitter: unknown, n: unknown, stack: CallSite[] | undefined): void {
    if (typeof emitter !== 'object' || emitter === null) return;
    if (disables(n)) this.lifted.set(emitter, stack?.[0] ?? null);
    else this.lifted.delete(emitter);
  }

  private add(what: string, value: number, stack: CallSite[]): void {
    if (what === 'events.defaultMaxListeners') this.defaultSeen = true;
    const key = `${what}\0${stack[0] ? `${stack[0].file}:${stack[0].line}:${stack[0].column}` : '?'}`;
    if (this.entries.has(key) || this.entries.size >= MAX_ENTRIES) return;
    const e: Entry = { what, value };
    if (stack.length > 0) {
      e.site = stack[0];
      e.stack = stack;
    }
    this.entries.set(key, e);
  }

  private patchInstanceMethod(): void {
    const proto = EventEmitter.prototype;
    const original = proto.setMaxListeners;
    const self = this;
    const wrapper = function (this: EventEmitter, n: number): EventEmitter {
      const result = original.call(this, n);
      // Node lifts the limit for a moment itself (a Worker's stdio piped into process.stdout)
      // and restores it: not a warning anyone silenced.
      try {
        if (!disables(n)) self.remember(this, n, undefined);
        else if (!calledByNode(wrapper)) {
          const stack = captureStack(wrapper);
          self.remember(this, n, stack);
          self.add(`${(this.constructor as { name?: string } | undefined)?.name || 'EventEmitter'}.setMaxListeners`, n, stack);
        }
      } catch {
        // Never break setMaxListeners.
      }
      return result;
    };
    defineLike(wrapper, original);
    proto.setMaxListeners = wrapper;
  }

  private patchStaticMethod(): void {
    const E = EventEmitter as unknown as { setMaxListeners?: (n?: number, ...targets: unknown[]) => void };
    const original = E.setMaxListeners;
    if (typeof original !== 'function') return;
    const self = this;
    const wrapper = function (this: unknown, n?: number, ...targets: unknown[]): void {
      original.call(this, n, ...targets);
      if (disables(n) && !calledByNode(wrapper)) {
        try {
          const stack = captureStack(wrapper);
          for (const t of targets) self.remember(t, n, stack);
          self.add(targets.length === 0 ? 'events.defaultMaxListeners' : 'EventEmitter.setMaxListeners', n, stack);
        } catch {
          // Never break setMaxListeners.
        }
      }
    };
    defineLike(wrapper, original);
    E.setMaxListeners = wrapper;
  }

  /** CommonJS `require('events')` returns a Proxy that records writes to defaultMaxListeners. */
  private proxyRequire(): void {
    const Module = require('node:module') as { prototype: { require: (this: unknown, id: string) => unknown } };
    const originalRequire = Module.prototype.require;
    const self = this;
    function onSet(target: typeof EventEmitter, prop: string | symbol, value: unknown, receiver: unknown): boolean {
      if (prop === 'defaultMaxListeners' && disables(value)) {
        try {
          self.add('events.defaultMaxListeners', value, captureStack(onSet));
        } catch {
          // Never break the assignment.
        }
      }
      return Reflect.set(target, prop, value, receiver === proxy ? target : receiver);
    }
    const proxy: unknown = new Proxy(EventEmitter, {
      get(target, prop, receiver) {
        if (prop === 'EventEmitter') return proxy;
        return Reflect.get(target, prop, receiver === proxy ? target : receiver);
      },
      set: onSet,
      // `new EventEmitter()` with the Proxy as new.target makes V8 build every instance the slow
      // way (measured: 0.3 -> 18 µs per construction): construct the real class instead.
      construct(target, args, newTarget) {
        return Reflect.construct(target, args, newTarget === proxy ? target : newTarget);
      },
    });
    const wrapped = function (this: unknown, id: string): unknown {
      if (id === 'events' || id === 'node:events') return proxy;
      return originalRequire.call(this, id);
    };
    defineLike(wrapped, originalRequire);
    Module.prototype.require = wrapped;
  }
}
