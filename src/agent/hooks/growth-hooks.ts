// The growth hooks of one thread, installed when the agent loads and counting only after the
// thread listens (except max-listeners, which must see modules that disable the warning at
// require time). Assembles their cumulative totals into `growth` messages, sent only on change.
import type * as net from 'node:net';
import type { GrowthMessage } from '../protocol.js';

export type GrowthBody = Omit<GrowthMessage, 'v' | 'pid' | 'threadId' | 't'>;

/** One hook: installs its patch once, and contributes its part of the growth message. */
export interface GrowthHook {
  install(): void;
  onListen?(server: net.Server): void;
  contribute(into: GrowthBody): void;
}

export class GrowthHooks {
  private lastJson = '';

  constructor(private readonly hooks: GrowthHook[]) {}

  install(onError: (what: string, err: unknown) => void): void {
    for (const h of this.hooks) {
      try {
        h.install();
      } catch (err) {
        onError(`hook-install:${h.constructor.name}`, err);
      }
    }
  }

  onListen(server: net.Server): void {
    for (const h of this.hooks) h.onListen?.(server);
  }

  /** The totals, or undefined when nothing changed since the last call. */
  snapshot(): GrowthBody | undefined {
    const body: GrowthBody = { type: 'growth', listeners: [], maxListenersDisabled: [], routes: [], timers: [], syncCalls: [], outgoing: [], handles: [] };
    for (const h of this.hooks) h.contribute(body);
    const json = JSON.stringify(body);
    if (json === this.lastJson) return undefined;
    const empty = body.listeners.length + body.maxListenersDisabled.length + body.routes.length + body.timers.length + body.syncCalls.length + (body.outgoing?.length ?? 0) + (body.closeHeaderSites?.length ?? 0) + (body.handles?.length ?? 0) === 0;
    this.lastJson = json;
    return empty ? undefined : body;
  }
}
