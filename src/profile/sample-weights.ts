// The weight of each CPU sample, in µs, from the profile's timeDeltas: sample i covers the
// time until the next sample. Never the nominal interval (the achieved interval is
// longer, and uneven). Samples are ordered by time defensively; a negative gap counts 0.

import type { CpuProfile } from './cpu-profile.js';

export interface SampleWeights {
  /** Absolute time of each sample (µs, the profile's clock), in file order. */
  time: Float64Array;
  /** µs each sample stands for, in file order. */
  weight: Float64Array;
  /** Sample indexes in time order. */
  order: Int32Array;
}

export function sampleWeights(profile: CpuProfile): SampleWeights {
  const n = profile.samples.length;
  const time = new Float64Array(n);
  let t = profile.startTime;
  let sorted = true;
  for (let i = 0; i < n; i++) {
    const d = Number(profile.timeDeltas[i]) || 0;
    if (d < 0) sorted = false;
    t += d;
    time[i] = t;
  }
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  if (!sorted) order.sort((a, b) => time[a] - time[b] || a - b);
  // Like Chrome DevTools: a sample stands for the time until the next one (the last, until
  // endTime). The gap before the first sample is the profiler starting up: it is not counted.
  const weight = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const i = order[k];
    const next = k + 1 < n ? time[order[k + 1]] : Math.max(profile.endTime, time[i]);
    weight[i] = Math.max(0, next - time[i]);
  }
  return { time, weight, order };
}
