// The growth hooks of one thread, installed when the agent loads and counting only after the
// thread listens (except max-listeners, which must see modules that disable the warning at
// require time). Assembles their cumulative totals into `growth` messages, sent only on change.
// Each hook is a part of its own (`hook:<name>`, see safe.ts): a hook that throws while it
// installs, looks at a listening server or reports its totals is disabled and reported once;
// the other hooks, and the rest of the agent, carry on.
import type * as net from 'node:net';
import type { GrowthMessage } from '../protocol.js';
import { guardPart, partFailed } from '../safe.js';

export type GrowthBody = Omit<GrowthMessage, 'v' | 'pid' | 'threadId' | 't'>;

/** One hook: installs its patch once, and contributes its part of the growth message. */
export interface GrowthHook {
  install(): void;
  onListen?(server: net.Server): void;
  contribute(into: GrowthBody): void;
}

/** A hook and the name its failures are reported under (`hook:<name>`). */
export interface NamedHook {
  name: string;
  hook: GrowthHook;
}

export const hookPart = (name: string): string => `hook:${name}`;

const emptyBody = (): GrowthBody => ({
  type: 'growth',
  listeners: [],
  maxListenersDisabled: [],
  routes: [],
  timers: [],
  syncCalls: [],
  outgoing: [],
  handles: [],
});

export class GrowthHooks {
  private lastJson = '';

  constructor(private readonly hooks: NamedHook[]) {}

  install(): void {
    for (const { name, hook } of this.hooks) guardPart(hookPart(name), () => hook.install());
  }

  onListen(server: net.Server): void {
    for (const { name, hook } of this.hooks) {
      if (hook.onListen !== undefined) guardPart(hookPart(name), () => hook.onListen?.(server));
    }
  }

  /** The totals, or undefined when nothing changed since the last call. */
  snapshot(): GrowthBody | undefined {
    const body = emptyBody();
    for (const { name, hook } of this.hooks) {
      if (partFailed(hookPart(name))) continue;
      // Into a body of its own: a hook that fails half-way adds nothing.
      const own = guardPart(hookPart(name), () => {
        const part = emptyBody();
        hook.contribute(part);
        return part;
      });
      if (own !== undefined) merge(body, own);
    }
    const json = JSON.stringify(body);
    if (json === this.lastJson) return undefined;
    const empty =
      body.listeners.length +
        body.maxListenersDisabled.length +
        body.routes.length +
        body.timers.length +
        body.syncCalls.length +
        (body.outgoing?.length ?? 0) +
        (body.closeHeaderSites?.length ?? 0) +
        (body.handles?.length ?? 0) +
        (body.socketWaits?.length ?? 0) +
        (body.messageWaits?.length ?? 0) ===
      0;
    this.lastJson = json;
    return empty ? undefined : body;
  }
}

/** Appends every list of `from` to the same list of `into` (creating optional ones). */
function merge(into: GrowthBody, from: GrowthBody): void {
  const target = into as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(from)) {
    if (!Array.isArray(value) || value.length === 0) continue;
    const list = target[key];
    if (Array.isArray(list)) list.push(...(value as unknown[]));
    else target[key] = [...(value as unknown[])];
  }
}
