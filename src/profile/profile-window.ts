// Time windows over a CPU profile. A window is either relative to the profile's start (µs)
// or in epoch ms, with the epoch time at which the profile started (the agent records it
// in the run dir's profile entry as `start`), because the profile's own clock is monotonic.

import type { CpuProfile } from './cpu-profile.js';

export type ProfileWindow =
  /** µs since the profile's start; either bound may be left open. */
  | { startUs?: number; endUs?: number }
  /** Epoch ms bounds, and the epoch ms of the profile's startTime. */
  | { startMs: number; endMs: number; profileStartEpochMs: number };

export interface ResolvedWindow {
  /** Inclusive start and exclusive end, in the profile's clock (µs). */
  startUs: number;
  endUs: number;
  /** Bounds used to select samples (open ends when no window was given). */
  filterStart: number;
  filterEnd: number;
}

export function resolveWindow(profile: CpuProfile, window: ProfileWindow | undefined): ResolvedWindow {
  const t0 = profile.startTime;
  if (!window) return { startUs: t0, endUs: profile.endTime, filterStart: -Infinity, filterEnd: Infinity };
  let start: number;
  let end: number;
  if ('profileStartEpochMs' in window) {
    start = t0 + (window.startMs - window.profileStartEpochMs) * 1000;
    end = t0 + (window.endMs - window.profileStartEpochMs) * 1000;
  } else {
    start = window.startUs === undefined ? -Infinity : t0 + window.startUs;
    end = window.endUs === undefined ? Infinity : t0 + window.endUs;
  }
  return {
    startUs: Math.max(t0, start),
    endUs: Math.min(profile.endTime, end),
    filterStart: start,
    filterEnd: end,
  };
}
