// AsyncLocalStorage instances the app enables after listen, by call site. Node keeps every enabled
// instance until its `disable()`; on the async_hooks implementation (Node 20 and 22 by default)
// each new async resource (every promise, timer, socket) walks the list of enabled instances to
// copy their stores, so a storage constructed per request and never disabled makes every await
// slower as the requests go on, and is never freed. An instance is counted once, at its first
// `run` or `enterWith` after listen; a WeakSet remembers those seen (one `has` per call after that).
import type { GrowthBody, GrowthHook } from './growth-hooks.js';
import { threadState } from '../thread-state.js';
import { SiteCounter, withSite } from './site-counter.js';
import { defineLike } from './wrap.js';

type Fn = (this: unknown, ...args: unknown[]) => unknown;

export class AsyncStorageGrowth implements GrowthHook {
  private readonly sites = new SiteCounter<Record<string, never>>(() => ({}));
  private readonly seen = new WeakSet<object>();

  install(): void {
    const proto = (require('node:async_hooks') as typeof import('node:async_hooks')).AsyncLocalStorage.prototype as unknown as Record<
      string,
      unknown
    >;
    for (const name of ['run', 'enterWith']) {
      const original = proto[name];
      if (typeof original !== 'function') continue;
      const self = this;
      const wrapper = function (this: unknown, ...args: unknown[]): unknown {
        if (threadState.listening && threadState.agentBusy === 0) self.enabled(this, wrapper);
        return (original as Fn).apply(this, args);
      };
      defineLike(wrapper, original as Fn);
      proto[name] = wrapper;
    }
  }

  contribute(into: GrowthBody): void {
    const out = (into.asyncStorages ??= []);
    for (const e of this.sites.entries.values()) out.push(withSite({ enabled: e.count }, e));
  }

  private enabled(storage: unknown, skip: Function): void {
    try {
      if (typeof storage !== 'object' || storage === null || this.seen.has(storage)) return;
      this.seen.add(storage);
      this.sites.hit('AsyncLocalStorage', skip);
    } catch {
      // Counting must never break the storage it observed.
    }
  }
}
