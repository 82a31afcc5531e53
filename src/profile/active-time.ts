// How much of a CPU profile's sampled time the thread was not idle, without building a call
// tree: the loop utilization a profile gives (samples V8 took while the loop waited are
// `(idle)`), for threads whose full tree is not needed.

import type { CpuProfile } from './cpu-profile.js';
import { nodeIndex, indexNodes } from './raw-index.js';
import { resolveWindow, type ProfileWindow } from './profile-window.js';
import { sampleWeights } from './sample-weights.js';

/** Sampled and non-idle time (µs), counting only samples inside `window` when given. */
export function activeTime(profile: CpuProfile, window?: ProfileWindow): { totalUs: number; activeUs: number } {
  const raw = indexNodes(profile);
  const idle = new Uint8Array(raw.count);
  profile.nodes.forEach((n, i) => {
    idle[i] = n.callFrame.functionName === '(idle)' && n.callFrame.url === '' ? 1 : 0;
  });
  const win = resolveWindow(profile, window);
  const weights = sampleWeights(profile);
  let totalUs = 0;
  let idleUs = 0;
  for (let s = 0; s < profile.samples.length; s++) {
    const t = weights.time[s];
    const node = nodeIndex(raw, profile.samples[s]);
    if (node === undefined || !raw.reachable[node] || t < win.filterStart || t >= win.filterEnd) continue;
    totalUs += weights.weight[s];
    if (idle[node]) idleUs += weights.weight[s];
  }
  return { totalUs, activeUs: totalUs - idleUs };
}
