// The CPU profile's default sampling interval, chosen from the run: enough samples for the
// analyzers' statistics over a load of known duration (CPU_SAMPLES_WANTED, a busy loop's), at
// the lowest rate that gives them, between 1 ms and 10 ms (the 99-100 Hz of the production
// profilers). Each sample costs the target a wakeup of V8's profiler thread, on the target's own
// core when it is pinned, and a stack walk on its loop (docs/agent.md, Cost). The analyzers'
// thresholds are shares of 8 % and up (a culprit's 25 %, its hottest line's 25 % of it): at
// 1,000 samples a 25 % share is known to ± 1.4 points. The default 10 s load gets 10 ms (100 Hz),
// a 5 s load 5 ms, a 2 s one 2 ms. A load without a known end (--amount) keeps 1 ms. The
// interval used is stated in report.json (telemetry.agentCost.cpuSamplingIntervalUs) and the
// terminal; --cpu-interval sets it.

/** CPU samples a busy loop gets over a load of known duration at the default interval. */
export const CPU_SAMPLES_WANTED = 1000;
export const CPU_INTERVAL_MIN_US = 1000;
export const CPU_INTERVAL_MAX_US = 10_000;

export function defaultCpuIntervalUs(durationS: number | undefined, byCount: boolean): number {
  if (byCount || durationS === undefined || !(durationS > 0)) return CPU_INTERVAL_MIN_US;
  const us = Math.floor((durationS * 1e6) / CPU_SAMPLES_WANTED / 100) * 100;
  return Math.min(CPU_INTERVAL_MAX_US, Math.max(CPU_INTERVAL_MIN_US, us));
}
