// Which threads served the load and what they reported inside the measured load window.
// Every analyzer looks at the same slice, so warm-up and shutdown never blur a finding.

import type { GcEvent, SampleMessage, StallMessage } from '../../agent/protocol.js';
import type { RunData, ThreadTelemetry } from '../../run-dir/run-data.js';
import { extent } from './stats.js';
import { isPreemptedStall } from './preempted-stall.js';
import { isPreemptedDelay } from './preempted-delay.js';

export interface Window {
  start: number;
  end: number;
  durationMs: number;
}

/** The measured load window: the run's 'load' phase, else the load result, else all samples. */
export function loadWindow(run: RunData): Window | null {
  const w = run.loadWindow ?? (run.load ? { start: run.load.start, end: run.load.end } : undefined);
  if (w && w.end > w.start) return { start: w.start, end: w.end, durationMs: w.end - w.start };
  const ts = targetThreads(run).flatMap((t) => t.samples.map((s) => s.t));
  if (ts.length < 2) return null;
  const { min: start, max: end } = extent(ts);
  return { start, end, durationMs: end - start };
}

/**
 * Threads that served requests; else those that listened; else all with samples. A cluster
 * primary listens (its handle is shared) but serves nothing: its idle loop must not dilute
 * the workers' figures.
 */
export function targetThreads(run: RunData): ThreadTelemetry[] {
  const listening = run.threads.filter((t) => t.listens.length > 0);
  const serving = listening.filter((t) => t.samples.some((s) => (s.http?.finished ?? 0) > 0));
  if (serving.length > 0) return serving;
  return listening.length > 0 ? listening : run.threads.filter((t) => t.samples.length > 0);
}

/** A sample covers [t - intervalMs, t]; it belongs to the window when most of it lies inside. */
export function inWindow(sample: SampleMessage, w: Window | null): boolean {
  if (!w) return true;
  const mid = sample.t - sample.intervalMs / 2;
  return mid >= w.start && mid <= w.end;
}

export function windowSamples(thread: ThreadTelemetry, w: Window | null): SampleMessage[] {
  return thread.samples.filter((s) => inWindow(s, w));
}

/** The most requests the thread had in flight at one sample of the window (0 without HTTP figures). */
export function inFlightPeak(thread: ThreadTelemetry, w: Window | null): number {
  let peak = 0;
  for (const s of windowSamples(thread, w)) peak = Math.max(peak, s.http?.active ?? 0);
  return peak;
}

/** Slack after an agent pause: the sampler's own tick, late by the pause, takes the next sample. */
const AGENT_PAUSE_SLACK_MS = 50;

/**
 * The window's samples whose loop delay is the app's: without those overlapping a pause the agent
 * caused (a `stall` marked `byAgent`: V8 building a profile the agent stopped, its post-load GC),
 * whatever the pause's length. The `--heap` switch in the middle of the load holds the loop
 * 50-300 ms while requests run; one such sample made the loop-delay p99 of a 5 s run 115 ms
 * instead of 30-50 (the p99 of 50 samples is their maximum). Nor those overlapping a stall the
 * machine caused (preempted: the thread was kept off the cores and ran next to nothing, see
 * preempted-stall.ts), which the stall rules already leave out: a healthy file server at 0.18 ms
 * per request read a delay p99 of 650 ms from one preempted stall of 1,066 ms (load average 11) and
 * was called critically blocked. Nor those whose delay, too short for the stall watchdog, built up
 * while the thread ran next to nothing (preempted-delay.ts): a healthy restify route at 0.05 ms per
 * request read a delay p99 of 107 ms in a 2 s run beside two test suites (CI-like load, Node 24)
 * and was called critically blocked.
 */
export function loopDelaySamples(thread: ThreadTelemetry, w: Window | null): SampleMessage[] {
  const pauses = thread.stalls.filter((s) => (s.byAgent !== undefined || isPreemptedStall(s)) && !s.ongoing);
  const all = thread.samples;
  const overlaps = (s: SampleMessage): boolean =>
    pauses.some((p) => s.t - s.intervalMs < p.start + p.durationMs + AGENT_PAUSE_SLACK_MS && s.t > p.start);
  const kept = all.filter((s, i) => inWindow(s, w) && !overlaps(s) && !isPreemptedDelay(all, i));
  return kept.length > 0 ? kept : windowSamples(thread, w);
}

export function windowGc(thread: ThreadTelemetry, w: Window | null): GcEvent[] {
  return w ? thread.gc.filter((e) => e.start >= w.start && e.start <= w.end) : thread.gc;
}

/**
 * The app's stalls overlapping the window (a stall is resent while ongoing: keep the final
 * report per start). Stalls the agent caused itself (stopping a profile, the GC it forces after
 * the load: the latest report says so) are left out.
 */
export function windowStalls(thread: ThreadTelemetry, w: Window | null): StallMessage[] {
  const byStart = new Map<number, StallMessage>();
  for (const s of thread.stalls) {
    if (w && (s.start > w.end || s.start + s.durationMs < w.start)) continue;
    const prev = byStart.get(s.start);
    if (!prev || s.durationMs >= prev.durationMs) byStart.set(s.start, s);
  }
  return [...byStart.values()].filter((s) => s.byAgent === undefined);
}

/** The requests a thread finished in the window. */
export function windowRequests(thread: ThreadTelemetry, w: Window | null): number {
  return windowSamples(thread, w).reduce((a, s) => a + (s.http?.finished ?? 0), 0);
}

/** The target thread that served most requests (the one to profile-match and to blame). */
export function busiestThread(run: RunData, w: Window | null): ThreadTelemetry | undefined {
  let best: ThreadTelemetry | undefined;
  let bestCount = -1;
  for (const t of targetThreads(run)) {
    const n = windowRequests(t, w);
    if (n > bestCount) {
      best = t;
      bestCount = n;
    }
  }
  return best;
}
