// The list of growth hooks the agent installs, each under the name its failures are reported with.
import { GrowthHooks } from './growth-hooks.js';
import { ListenerGrowth } from './listener-growth.js';
import { MaxListeners } from './max-listeners.js';
import { SyncApiCalls } from './sync-api-calls.js';
import { TimerGrowth } from './timer-growth.js';
import { RouteGrowth } from './route-growth.js';
import { OutgoingCalls } from './outgoing-calls.js';
import { ConnectionCloseSites } from './connection-close.js';
import { HandleGrowth } from './handle-growth.js';
import { SocketWaits } from './socket-waits.js';
import { MessageWaits } from './message-waits.js';
import { AsyncStorageGrowth } from './async-storage-growth.js';

export function createGrowthHooks(): GrowthHooks {
  const maxListeners = new MaxListeners();
  return new GrowthHooks([
    { name: 'max-listeners', hook: maxListeners },
    { name: 'listener-growth', hook: new ListenerGrowth(maxListeners) },
    { name: 'sync-api-calls', hook: new SyncApiCalls() },
    { name: 'timer-growth', hook: new TimerGrowth() },
    { name: 'route-growth', hook: new RouteGrowth() },
    { name: 'outgoing-calls', hook: new OutgoingCalls() },
    { name: 'connection-close', hook: new ConnectionCloseSites() },
    { name: 'handle-growth', hook: new HandleGrowth() },
    { name: 'socket-waits', hook: new SocketWaits() },
    { name: 'message-waits', hook: new MessageWaits() },
    { name: 'async-storage-growth', hook: new AsyncStorageGrowth() },
  ]);
}
