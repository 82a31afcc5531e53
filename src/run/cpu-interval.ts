// The CPU profile's default sampling interval, chosen from the run: enough samples for the
// analyzers' statistics over a load of known duration (CPU_SAMPLES_WANTED), at the lowest rate
// that gives them, between 1 ms and 10 ms (the 100 Hz production profilers use). Each sample
// costs the target a wakeup of V8's profiler thread and a stack walk on its loop (docs/agent.md,
// Cost). A load without a known end (--amount, a scenario run by count) keeps 1 ms. The
// interval used is stated in report.json (telemetry.agentCost.cpuSamplingIntervalUs) and the
// terminal; --cpu-interval sets it.

/** CPU samples a load of known duration gets at the default interval (a busy loop's). */
export const CPU_SAMPLES_WANTED = 2500;
export const CPU_INTERVAL_MIN_US = 1000;
export const CPU_INTERVAL_MAX_US = 10_000;

export function defaultCpuIntervalUs(durationS: number | undefined, byCount: boolean): number {
  if (byCount || durationS === undefined || !(durationS > 0)) return CPU_INTERVAL_MIN_US;
  const us = Math.floor((durationS * 1e6) / CPU_SAMPLES_WANTED / 100) * 100;
  return Math.min(CPU_INTERVAL_MAX_US, Math.max(CPU_INTERVAL_MIN_US, us));
}
