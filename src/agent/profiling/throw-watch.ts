// Where the errors thrown while requests were left unanswered went: the main thread's exceptions
// in a short window after the load, through the inspector's Debugger domain (its own session from
// the agent worker). Only opened when the measured load left requests unanswered (the CLI sends
// `watch-throws` and drives a little more load that is not measured, on fresh connections: the
// call-count window of call-counts.ts), and closed at the flush, so the measured figures never
// include it.
//
// Every exception, caught or not, pauses the main thread for as long as the worker takes to note
// where it was thrown (the first frames of the stack) and to step once (`Debugger.stepInto`: from
// an exception, V8 steps to where it is handled: the first statement of the `catch` that took it,
// or the next code that runs when nothing in that stack does), and where that step stopped is noted
// too; then the thread resumes. Nothing of the app's behaviour changes (no listener, no handler is
// added; an exception goes where it went); each throw costs a round trip between the threads, so
// at most MAX_THROW_PAUSES are followed per window. Written as `throws-<pid>-<tid>.json`
// (docs/run-directory.md): groups of identical (thrown at, caught at) pairs with their counts.
import type { Session } from 'node:inspector';
import { join } from 'node:path';
import { epochNow } from '../clock.js';
import type { CallSite } from '../protocol.js';
import { disconnect } from './inspector-profiler.js';
import { writeFileSpared } from '../fd-reserve.js';

/**
 * Exceptions followed per window at most: each pauses the main thread twice, 0.45-0.8 ms a throw
 * in all (Node 20 and 24, a busy 2-core machine), so at most about 0.4 s of pauses; once reached,
 * V8 stops pausing and the window says it was `capped` (its counts are then no rates).
 */
export const MAX_THROW_PAUSES = 500;
/** Frames kept from the throw site down. */
export const THROW_FRAMES = 6;
/** Distinct (thrown at, handled at) pairs kept. */
export const MAX_THROW_GROUPS = 200;

export interface ThrowGroup {
  count: number;
  /** V8 predicted no handler for it (an async function's rejection nobody awaits counts as caught by V8 when a handler was attached). */
  uncaught: boolean;
  /** The stack where it was thrown, innermost first. */
  frames: CallSite[];
  /** Where the step from the exception stopped: the first statement of the handler that took it. */
  handledAt?: CallSite;
}

export interface ThrowWindow {
  start: number;
  end: number;
  /** Exceptions followed; `capped`: MAX_THROW_PAUSES was reached and later ones were not. */
  followed: number;
  capped?: boolean;
  groups: ThrowGroup[];
}

interface PausedFrame {
  functionName?: string;
  url?: string;
  location?: { scriptId?: string; lineNumber?: number; columnNumber?: number };
  functionLocation?: { lineNumber?: number; columnNumber?: number };
}
interface Paused {
  reason?: string;
  data?: { uncaught?: boolean };
  callFrames?: PausedFrame[];
}

/** `throws-<pid>-<tid>.json`. */
export function throwsFileName(pid: number, threadId: number): string {
  return `throws-${pid}-${threadId}.json`;
}

/** A paused frame as a call site (1-based), its URL from the frame or the scripts parsed so far. */
export function frameSite(f: PausedFrame, urls: ReadonlyMap<string, string>): CallSite | undefined {
  const loc = f.location;
  if (loc?.lineNumber === undefined) return undefined;
  const file = f.url !== undefined && f.url !== '' ? f.url : urls.get(String(loc.scriptId));
  if (file === undefined || file === '') return undefined;
  return {
    function: f.functionName !== undefined && f.functionName !== '' ? f.functionName : '(anonymous)',
    file,
    line: loc.lineNumber + 1,
    column: (loc.columnNumber ?? 0) + 1,
    ...(f.functionLocation?.lineNumber !== undefined
      ? { functionLine: f.functionLocation.lineNumber + 1, functionColumn: (f.functionLocation.columnNumber ?? 0) + 1 }
      : {}),
  };
}

const siteKey = (s: CallSite | undefined): string => (s === undefined ? '-' : `${s.file}:${s.line}:${s.column}`);

export class ThrowWatch {
  private session: Session | undefined;
  private readonly urls = new Map<string, string>();
  private readonly groups = new Map<string, ThrowGroup>();
  /** The exception whose step is under way (its frames), until the next pause. */
  private stepping: { uncaught: boolean; frames: CallSite[] } | undefined;
  private followed = 0;
  private start = 0;
  private full = false;
  /** Script ids of the frames noted (their source maps and function ranges are captured at the flush). */
  readonly scripts = new Set<string>();

  constructor(
    private readonly connect: () => Session,
    private readonly onError: (what: string, err: unknown) => void,
    /** Called once V8 pauses on every exception (epoch ms). */
    private readonly onOpen?: (start: number) => void,
  ) {}

  get open(): boolean {
    return this.session !== undefined;
  }

  /** Starts following the main thread's exceptions (once per process: a second call does nothing). */
  openWatch(): void {
    if (this.session !== undefined || this.start !== 0) return;
    let s: Session;
    try {
      s = this.connect();
    } catch (err) {
      return this.onError('throw-watch', err);
    }
    this.session = s;
    this.start = epochNow();
    s.on('Debugger.scriptParsed', (m: { params?: { scriptId?: string; url?: string } }) => {
      const p = m.params;
      if (p?.scriptId !== undefined && typeof p.url === 'string' && p.url !== '') this.urls.set(p.scriptId, p.url);
    });
    s.on('Debugger.paused', (m: { params?: Paused }) => this.paused(m.params ?? {}));
    const fail = (err: Error | null): void => {
      if (err) {
        this.onError('throw-watch', err);
        this.close();
      }
    };
    s.post('Debugger.enable', fail);
    s.post('Debugger.setPauseOnExceptions', { state: 'all' }, (err) => {
      if (err) return fail(err);
      this.start = epochNow();
      this.onOpen?.(this.start);
    });
  }

  private paused(p: Paused): void {
    const s = this.session;
    if (s === undefined) return;
    try {
      const step = this.stepping;
      this.stepping = undefined;
      const isThrow = p.reason === 'exception' || p.reason === 'promiseRejection';
      if (step !== undefined && !isThrow) {
        const top = p.callFrames?.[0];
        const at = top === undefined ? undefined : frameSite(top, this.urls);
        if (top?.location?.scriptId !== undefined) this.scripts.add(String(top.location.scriptId));
        this.note(step.uncaught, step.frames, at);
      } else if (step !== undefined) this.note(step.uncaught, step.frames, undefined);
      if (isThrow && this.followed < MAX_THROW_PAUSES) {
        this.followed++;
        const kept = (p.callFrames ?? []).slice(0, THROW_FRAMES);
        for (const f of kept) if (f.location?.scriptId !== undefined) this.scripts.add(String(f.location.scriptId));
        const frames = kept.map((f) => frameSite(f, this.urls)).filter((x): x is CallSite => x !== undefined);
        this.stepping = { uncaught: p.data?.uncaught === true, frames };
        s.post('Debugger.stepInto', (err) => {
          if (err) s.post('Debugger.resume', () => {});
        });
        return;
      }
      if (this.followed >= MAX_THROW_PAUSES && !this.full) {
        this.full = true;
        s.post('Debugger.setPauseOnExceptions', { state: 'none' }, () => {});
      }
    } catch (err) {
      this.onError('throw-watch', err);
    }
    s.post('Debugger.resume', () => {});
  }

  private note(uncaught: boolean, frames: CallSite[], handledAt: CallSite | undefined): void {
    const key = `${uncaught ? 'u' : 'c'}|${frames.map(siteKey).join('|')}|${siteKey(handledAt)}`;
    const g = this.groups.get(key);
    if (g !== undefined) g.count++;
    else if (this.groups.size < MAX_THROW_GROUPS)
      this.groups.set(key, { count: 1, uncaught, frames, ...(handledAt !== undefined ? { handledAt } : {}) });
  }

  /** Stops following and returns what was seen (undefined when the watch never opened). */
  close(): ThrowWindow | undefined {
    const s = this.session;
    this.session = undefined;
    if (s === undefined) return undefined;
    if (this.stepping !== undefined) this.note(this.stepping.uncaught, this.stepping.frames, undefined);
    this.stepping = undefined;
    // Disconnected at once (a pause under way is resumed, the domain disabled): a session left
    // connected at the exit makes node print "Waiting for the debugger to disconnect...".
    disconnect(s);
    return {
      start: this.start,
      end: epochNow(),
      followed: this.followed,
      ...(this.full ? { capped: true } : {}),
      groups: [...this.groups.values()],
    };
  }
}

/** Writes a window's throws in the run directory, then `done`; never throws (a failure is reported). */
export function writeThrows(
  runDir: string,
  pid: number,
  threadId: number,
  w: ThrowWindow,
  onError: (what: string, err: unknown) => void,
  done: () => void,
): void {
  try {
    writeFileSpared(join(runDir, throwsFileName(pid, threadId)), JSON.stringify({ v: 1, pid, threadId, ...w }), (err) => {
      if (err) onError('throw-watch', err);
      done();
    });
  } catch (err) {
    onError('throw-watch', err);
    done();
  }
}
