// Handles the app opens after listen, by API and call site, and how many are still open:
// fs.watch watchers, outgoing net/tls sockets, dgram sockets, child processes. The builtins'
// exports are patched (syncBuiltinESMExports for ESM imports). Each object made is kept in a
// bounded map and its state read when growth is reported, about once a second (closed: an
// FSWatcher's `_handle` gone, a socket `destroyed`, a child's `_handle` gone once it exited, a
// dgram socket's handle gone), which also tells unref'd ones: they keep no loop alive and
// process.getActiveResourcesInfo() does not list them, so only this hook sees them pile up.
// These calls cost microseconds each (a syscall, a new native handle); the wrapper adds a
// counter, a Map insertion and, sampled per API (SiteCounter), a stack capture.
import type { GrowthBody, GrowthHook } from './growth-hooks.js';
import { threadState } from '../thread-state.js';
import { SiteCounter, withSite } from './site-counter.js';
import { defineLike } from './wrap.js';

/** Objects followed at once; beyond this, new ones are counted as created only (`untracked`). */
export const MAX_TRACKED_HANDLES = 50_000;

type Api = 'fs.watch' | 'net.connect' | 'tls.connect' | 'dgram.createSocket' | 'child_process.spawn';
interface Counts {
  resource: string;
  open: number;
  unref: number;
  untracked: number;
}
interface NativeHandle {
  hasRef?: () => boolean;
}
type Fn = (this: unknown, ...args: unknown[]) => unknown;

export class HandleGrowth implements GrowthHook {
  private readonly sites = new SiteCounter<Counts>(() => ({ resource: '', open: 0, unref: 0, untracked: 0 }));
  /** Whether a handle is ref'd is read once, at the first report after it was made (`.unref()` comes right after). */
  private readonly tracked = new Map<object, { data: Counts; api: Api; ref?: boolean }>();

  install(): void {
    this.patch('fs', ['watch'], 'fs.watch');
    // net.createConnection is net.connect: one wrapper for both names.
    this.patch('net', ['connect', 'createConnection'], 'net.connect');
    this.patch('tls', ['connect'], 'tls.connect');
    this.patch('dgram', ['createSocket'], 'dgram.createSocket');
    this.patch('child_process', ['spawn', 'fork', 'exec', 'execFile'], 'child_process.spawn');
    (require('node:module') as { syncBuiltinESMExports(): void }).syncBuiltinESMExports();
  }

  contribute(into: GrowthBody): void {
    this.sweep();
    for (const e of this.sites.entries.values()) {
      const d = e.data;
      into.handles!.push(
        withSite(
          {
            api: e.key,
            resource: d.resource,
            created: e.count,
            open: d.open,
            ...(d.unref > 0 ? { unref: d.unref } : {}),
            ...(d.untracked > 0 ? { untracked: d.untracked } : {}),
          },
          e,
        ),
      );
    }
  }

  /** Reads every followed object: closed ones are dropped, the open ones counted per site. */
  private sweep(): void {
    for (const e of this.sites.entries.values()) {
      e.data.open = 0;
      e.data.unref = 0;
    }
    for (const [obj, t] of this.tracked) {
      const handle = handleOf(obj, t.api);
      if (handle === undefined || handle === null) {
        if (handle === undefined) t.data.untracked++;
        this.tracked.delete(obj);
        continue;
      }
      t.ref ??= hasRef(handle);
      t.data.open++;
      if (!t.ref) t.data.unref++;
    }
  }

  private patch(moduleName: string, names: string[], api: Api): void {
    const mod = require(`node:${moduleName}`) as Record<string, unknown>;
    const done = new Map<unknown, Function>();
    for (const name of names) {
      const original = mod[name];
      if (typeof original !== 'function') continue;
      let wrapped = done.get(original);
      if (wrapped === undefined) {
        wrapped = this.wrap(api, original as Fn);
        done.set(original, wrapped);
      }
      mod[name] = wrapped;
    }
  }

  private wrap(api: Api, original: Fn): Function {
    const self = this;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      const made = original.apply(this, args);
      if (threadState.listening && threadState.agentBusy === 0) self.record(api, made, args, wrapper);
      return made;
    };
    defineLike(wrapper, original);
    return wrapper;
  }

  private record(api: Api, made: unknown, args: unknown[], skip: Function): void {
    try {
      if (typeof made !== 'object' || made === null) return;
      // tls.connect over a socket the app already opened adds no handle.
      if (api === 'tls.connect' && hasOption(args, 'socket')) return;
      const e = this.sites.hit(api, skip);
      if (e === undefined) return;
      if (e.data.resource === '') e.data.resource = resourceOf(api, args);
      if (this.tracked.size < MAX_TRACKED_HANDLES) this.tracked.set(made, { data: e.data, api });
      else e.data.untracked++;
    } catch {
      // Counting must never break the call it observed.
    }
  }
}

/** The type process.getActiveResourcesInfo() lists the handle as. */
function resourceOf(api: Api, args: unknown[]): string {
  switch (api) {
    case 'fs.watch':
      return 'FSEventWrap';
    case 'dgram.createSocket':
      return 'UDPWrap';
    case 'child_process.spawn':
      return 'ProcessWrap';
    default:
      return connectsToPath(args) ? 'PipeWrap' : 'TCPSocketWrap';
  }
}

/** net.connect(path) or ({ path }): a Unix socket or a named pipe. */
function connectsToPath(args: unknown[]): boolean {
  const first = args[0];
  if (typeof first === 'string') return !/^\d+$/.test(first);
  return hasOption(args, 'path');
}

function hasOption(args: unknown[], key: string): boolean {
  const first = args[0];
  return typeof first === 'object' && first !== null && (first as Record<string, unknown>)[key] != null;
}

let dgramState: symbol | undefined;

/**
 * The native handle an object still holds: null once closed (an FSWatcher's and a ChildProcess's
 * `_handle` go when closed or exited, a destroyed socket's too), undefined when its state cannot
 * be read (a recursive fs.watch, Linux, Node 20+, keeps it private).
 */
function handleOf(obj: object, api: Api): object | null | undefined {
  const o = obj as Record<string | symbol, unknown>;
  if (api === 'net.connect' || api === 'tls.connect') return o.destroyed === true ? null : ((o._handle as object | null | undefined) ?? {});
  if (api === 'dgram.createSocket') {
    dgramState ??= Object.getOwnPropertySymbols(obj).find((s) => s.description === 'state symbol');
    const state = dgramState !== undefined ? (o[dgramState] as { handle?: object | null } | undefined) : undefined;
    return state === undefined ? undefined : (state.handle ?? null);
  }
  if (!('_handle' in o)) return undefined;
  return (o._handle as object | null | undefined) ?? null;
}

function hasRef(handle: object): boolean {
  const h = handle as NativeHandle;
  return typeof h.hasRef === 'function' ? h.hasRef() : true;
}
