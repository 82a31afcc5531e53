// The list of growth hooks the agent installs.
import { GrowthHooks } from './growth-hooks.js';
import { ListenerGrowth } from './listener-growth.js';
import { MaxListeners } from './max-listeners.js';
import { SyncApiCalls } from './sync-api-calls.js';
import { TimerGrowth } from './timer-growth.js';
import { RouteGrowth } from './route-growth.js';
import { OutgoingCalls } from './outgoing-calls.js';
import { ConnectionCloseSites } from './connection-close.js';
import { HandleGrowth } from './handle-growth.js';

export function createGrowthHooks(): GrowthHooks {
  const maxListeners = new MaxListeners();
  return new GrowthHooks([maxListeners, new ListenerGrowth(maxListeners), new SyncApiCalls(), new TimerGrowth(), new RouteGrowth(), new OutgoingCalls(), new ConnectionCloseSites(), new HandleGrowth()]);
}
