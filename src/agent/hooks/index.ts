// The list of growth hooks the agent installs.
import { GrowthHooks } from './growth-hooks.js';

export function createGrowthHooks(): GrowthHooks {
  return new GrowthHooks([]);
}
