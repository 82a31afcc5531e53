// How many times each function ran in a short window of the load: V8's precise coverage with
// call counts (Profiler.startPreciseCoverage {callCount: true, detailed: false}), taken twice
// through its own session to the main thread. The first take resets V8's counters, the second
// returns the calls made in between; coverage is then stopped, so the target pays only inside the
// window. A sampling profile has no call counts: these give "a helper called 6,000 times per
// request from this loop" (the CLI divides by the requests the thread finished in the window).
//
// The cost is real while it runs: V8 deoptimizes the code and stops inlining so that every call
// is counted (a loop calling a small helper ran 4.4 times slower in the window on Node 20), which
// is why the window is short and placed right after the measured load, while the CLI drives a
// little more load that is not measured (it sends the window with profile-start: protocol.ts;
// src/run/call-count-window.ts), and never opened without a CPU profile. docs/agent.md, Call counts.
//
// The counts are kept per script (by V8 offsets) for the app's own files and written at the end,
// with the other per-script data, as rows in the function-ranges format (script-capture.ts).
import type { Session } from 'node:inspector';
import { epochNow } from '../clock.js';
import { disconnect } from './inspector-profiler.js';
import { holdCoverage, releaseCoverage } from './coverage-hold.js';
import type { CoverageFunction } from './function-ranges.js';

/** At most this many functions are kept (the app's own, with calls in the window). */
export const MAX_COUNTED_FUNCTIONS = 20_000;

export interface ScriptCalls {
  url: string;
  functions: CoverageFunction[];
}

export interface CallWindow {
  /** Epoch ms the counters were reset (first take answered) and read (second take answered). */
  start: number;
  end: number;
  /** scriptId → the script's functions that ran in the window. */
  scripts: Map<string, ScriptCalls>;
}

interface ScriptCoverage {
  scriptId: string;
  url: string;
  functions: CoverageFunction[];
}

/** Scripts whose counts are kept: the app's own files (not node's, not dependencies, not the agent's). */
export function isCountedScript(url: string, ownScriptsUrl?: string): boolean {
  if (!(url.startsWith('file://') || url.startsWith('/'))) return false;
  if (/[\\/]node_modules[\\/]/.test(url)) return false;
  return ownScriptsUrl === undefined || !url.startsWith(ownScriptsUrl);
}

/** The functions of the second take worth keeping (called at least once, in the app's scripts). */
export function keptCalls(result: readonly ScriptCoverage[], ownScriptsUrl?: string): Map<string, ScriptCalls> {
  const out = new Map<string, ScriptCalls>();
  let kept = 0;
  for (const s of result) {
    if (!isCountedScript(s.url, ownScriptsUrl)) continue;
    const functions = s.functions.filter((f) => (f.ranges[0]?.count ?? 0) > 0);
    if (functions.length === 0) continue;
    if (kept + functions.length > MAX_COUNTED_FUNCTIONS) break;
    kept += functions.length;
    out.set(String(s.scriptId), { url: s.url, functions });
  }
  return out;
}

export class CallCounter {
  private session: Session | undefined;
  private timers: NodeJS.Timeout[] = [];
  private readTimer: NodeJS.Timeout | undefined;
  /** The second take was asked for (the window is being read). */
  private reading = false;
  private started = 0;
  /** The window read, once it was. */
  window: CallWindow | undefined;

  constructor(
    private readonly connect: () => Session,
    private readonly onError: (what: string, err: unknown) => void,
    private readonly ownScriptsUrl?: string,
    /** Called around the two moments V8 may pause the main thread (coverage started and first take; second take and stop). */
    private readonly onBusy?: (busy: boolean) => void,
    /** Called once the window opened (epoch ms the counters were reset). */
    private readonly onOpen?: (start: number) => void,
  ) {}

  /**
   * Opens the window at `from` and reads it at `until` (epoch ms), or sooner when told to
   * (readNow: the CLI saw enough requests in it); a later schedule replaces it.
   */
  schedule(from: number, until: number): void {
    this.cancel();
    if (!(until > from)) return;
    const now = epochNow();
    this.readTimer = setTimeout(() => this.read(), Math.max(0, until - now));
    this.timers.push(
      setTimeout(() => this.open(), Math.max(0, from - now)),
      this.readTimer,
    );
    for (const t of this.timers) t.unref?.();
  }

  /** Reads the window now, when it is open (before that, the scheduled read stands). */
  readNow(): void {
    if (this.session === undefined || this.started === 0 || this.reading) return;
    if (this.readTimer !== undefined) clearTimeout(this.readTimer);
    this.readTimer = undefined;
    this.read();
  }

  /** The load ended before the window was read: coverage stops, nothing is kept. */
  cancel(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    this.close();
  }

  private open(): void {
    if (this.session !== undefined) return;
    let s: Session;
    try {
      s = this.connect();
    } catch (err) {
      return this.onError('call-counts', err);
    }
    this.session = s;
    // Another Profiler session ending now would switch the counting off (coverage-hold.ts).
    holdCoverage();
    this.onBusy?.(true);
    const fail = (err: Error | null): void => {
      if (err) this.failed(err);
    };
    s.post('Profiler.enable', fail);
    s.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false }, fail);
    // The first take resets the counters: what it returns (calls since start) is dropped.
    s.post('Profiler.takePreciseCoverage', (err) => {
      if (err) return this.failed(err);
      this.started = epochNow();
      this.onBusy?.(false);
      this.onOpen?.(this.started);
    });
  }

  private read(): void {
    const s = this.session;
    if (this.reading) return;
    if (s === undefined || this.started === 0) return this.close();
    this.reading = true;
    const start = this.started;
    this.onBusy?.(true);
    s.post('Profiler.takePreciseCoverage', (err, result) => {
      // Answered once the main thread took it: the calls counted ran until about now.
      const end = epochNow();
      if (err) return this.failed(err);
      try {
        const scripts = keptCalls((result as { result?: ScriptCoverage[] } | undefined)?.result ?? [], this.ownScriptsUrl);
        this.window = { start, end, scripts };
      } catch (e) {
        this.onError('call-counts', e);
      }
      this.close();
    });
  }

  private failed(err: Error): void {
    this.onError('call-counts', err);
    this.close();
  }

  private close(): void {
    const s = this.session;
    this.session = undefined;
    this.started = 0;
    this.reading = false;
    if (s === undefined) return;
    const done = (): void => {
      disconnect(s);
      this.onBusy?.(false);
    };
    try {
      s.post('Profiler.stopPreciseCoverage', done);
    } catch {
      done();
    }
    // The other sessions' ends reach the main thread after the stop (one queue, in order), and
    // never wait on its answer (an exiting main thread may give none).
    releaseCoverage();
  }
}
