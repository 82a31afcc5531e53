// Synchronous APIs called while a request is in flight on this thread (crypto *Sync such as
// pbkdf2Sync and scryptSync, fs *Sync, zlib *Sync, child_process *Sync): count, time and call
// site. The builtins' exports are patched and module.syncBuiltinESMExports() makes
// `import { pbkdf2Sync } from 'node:crypto'` see the wrapper too. Outside a request the
// wrapper is one boolean test and a direct call. A write to stdout or stderr (console.log to a
// file) is reported as `fs.writeSync (stdout)`.
import { performance } from 'node:perf_hooks';
import type { GrowthBody, GrowthHook } from './growth-hooks.js';
import { threadState } from '../thread-state.js';
import { SiteCounter, withSite } from './site-counter.js';
import { defineLike } from './wrap.js';

const CRYPTO = ['pbkdf2Sync', 'scryptSync', 'generateKeyPairSync', 'generateKeySync', 'generatePrimeSync', 'hkdfSync', 'randomFillSync'];
const CHILD_PROCESS = ['execSync', 'execFileSync', 'spawnSync'];
/** fs and zlib: every export ending in Sync. */
const ALL_SYNC = ['fs', 'zlib'];

export class SyncApiCalls implements GrowthHook {
  private readonly sites = new SiteCounter(() => ({ totalMs: 0 }));
  /** Nested sync calls (readFileSync calls openSync) are counted once, as the outer call. */
  private depth = 0;

  install(): void {
    this.patch('crypto', CRYPTO);
    this.patch('child_process', CHILD_PROCESS);
    for (const name of ALL_SYNC) {
      const mod = require(`node:${name}`) as Record<string, unknown>;
      this.patch(
        name,
        Object.keys(mod).filter((k) => k.endsWith('Sync') && typeof mod[k] === 'function'),
      );
    }
    (require('node:module') as { syncBuiltinESMExports(): void }).syncBuiltinESMExports();
  }

  contribute(into: GrowthBody): void {
    for (const e of this.sites.entries.values()) {
      into.syncCalls.push(withSite({ api: e.key, count: e.count, totalMs: Math.round(e.data.totalMs * 1000) / 1000 }, e));
    }
  }

  private patch(moduleName: string, names: string[]): void {
    const mod = require(`node:${moduleName}`) as Record<string, unknown>;
    for (const name of names) {
      const original = mod[name];
      if (typeof original !== 'function') continue;
      mod[name] = this.wrap(`${moduleName}.${name}`, original as (...args: unknown[]) => unknown);
    }
  }

  private wrap(api: string, original: (...args: unknown[]) => unknown): Function {
    const self = this;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      if (!threadState.listening || threadState.activeRequests <= 0 || self.depth > 0) return original.apply(this, args);
      self.depth++;
      const t0 = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        self.depth--;
        self.record(stdio(api, args[0]), performance.now() - t0, wrapper);
      }
    };
    defineLike(wrapper, original);
    return wrapper;
  }

  private record(api: string, ms: number, skip: Function): void {
    try {
      const e = this.sites.hit(api, skip);
      if (e !== undefined) e.data.totalMs += ms;
    } catch {
      // Counting must never break the call it observed.
    }
  }
}

/**
 * A write to fd 1 or 2 is console.log / process.stdout.write going to a file (a SyncWriteStream):
 * named apart, as its fix is a logger, not fs.promises.
 */
function stdio(api: string, fd: unknown): string {
  if (fd !== 1 && fd !== 2) return api;
  return api === 'fs.writeSync' || api === 'fs.writevSync' ? `${api} (${fd === 1 ? 'stdout' : 'stderr'})` : api;
}
