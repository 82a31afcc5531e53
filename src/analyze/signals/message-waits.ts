// Messages the app sent to a child process (IPC) or a worker thread on the request path (the
// agent's message-waits hook), as totals over the load window per target and call site, told like
// outgoing HTTP calls (api 'ipc', the target as origin): each is a wait from the send to the
// message that answered it.

import type { ThreadTelemetry } from '../../run-dir/run-data.js';
import type { GrowthMessage } from '../../agent/protocol.js';
import type { Window } from './load-window.js';
import { windowGrowth } from './growth-series.js';
import { callCounts, callPlaces, type OutgoingWait } from './outgoing-waits.js';

type MessageEntry = NonNullable<GrowthMessage['messageWaits']>[number];

const key = (e: MessageEntry) => `${e.target} ${e.site?.file ?? ''}:${e.site?.line ?? 0}:${e.site?.column ?? 0}`;

/**
 * Cumulative totals turned into the window's (the last report within it minus the last one before
 * it, as for socket waits: the answers to requests still in flight when the load stops come late),
 * longest wait first.
 */
export function messageWaits(thread: ThreadTelemetry, w: Window | null): OutgoingWait[] {
  const bounds = windowGrowth(thread, w);
  if (!bounds) return [];
  const { before } = bounds;
  const inside = w
    ? thread.growth.findLast((m) => m.t <= w.end && m.t > (before?.t ?? w.start) && m.messageWaits !== undefined)
    : undefined;
  const end = inside ?? bounds.end;
  return (end.messageWaits ?? [])
    .map((e): OutgoingWait => {
      const prev = before?.messageWaits?.find((p) => key(p) === key(e));
      return { api: 'ipc', origin: e.target, ...callCounts(e, prev), ...callPlaces(e, prev) };
    })
    .filter((x) => x.completed > 0)
    .sort((a, b) => b.totalMs - a.totalMs);
}
