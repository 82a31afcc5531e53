// What the stalls were doing. While a thread is stalled the agent's watchdog samples it, and
// the stall's final report carries its hottest stacks (leaf first) with their share of the
// stall's samples. Each stack's share of the stall's duration is blocked time of the first app
// frame on it: the user's code that did the blocking work or asked a dependency or node for it.
// This names what blocked the loop when no CPU profile does: a run with --no-profile, or a block
// the profile's window missed. As in the CPU profile, the run's function ranges give a function
// V8 inlined into the leaf its time back, and name anonymous functions.

import type { CallSite, StallMessage } from '../../agent/protocol.js';
import type { RunData, ThreadTelemetry } from '../../run-dir/run-data.js';
import { loadWindow, targetThreads, windowStalls } from './load-window.js';
import { isPreemptedStall } from './preempted-stall.js';
import { isAppSite } from './culprit.js';
import { contains, scriptFunctions, type ScriptFunctions } from '../../profile/script-functions.js';
import { anonymousNameAt } from '../../profile/anonymous-names.js';
import { callsOnLine } from '../../profile/line-calls.js';
import { runSourceLine } from '../../profile/run-source-maps.js';

export interface StallCulprit {
  site: CallSite;
  /** Stalled time charged to the site over the load window, ms. */
  blockedMs: number;
  /** Its share of all the stalled time in the window (sampled stalls or not). */
  share: number;
  /** Stalls it appears in. */
  stalls: number;
}

/** App functions by the stalled time their stacks account for, largest first. */
export function stallCulprits(run: RunData): StallCulprit[] {
  const w = loadWindow(run);
  // A stall the machine caused (the thread was kept off the cores) says nothing of the code.
  const stalls = targetThreads(run)
    .flatMap((t) => windowStalls(t, w))
    .filter((s) => !s.ongoing && !isPreemptedStall(s));
  const totalMs = stalls.reduce((a, s) => a + s.durationMs, 0);
  if (totalMs <= 0) return [];
  const bySite = new Map<string, StallCulprit>();
  const functions = (url: string): ScriptFunctions | undefined => scriptFunctions(run.functionRanges, url);
  const lineText = (url: string, line: number): string | undefined => runSourceLine(run, url, line);
  for (const s of stalls) {
    const seen = new Set<string>();
    for (const c of s.cause ?? []) {
      const site = causeSite(c, functions, lineText);
      if (site === undefined) continue;
      // Without the column: V8 starts a function at its parameters in a profile, at its keyword in its ranges.
      const key = `${site.function}\u0000${site.file}:${site.line}`;
      const entry = bySite.get(key) ?? { site, blockedMs: 0, share: 0, stalls: 0 };
      entry.blockedMs += c.share * s.durationMs;
      if (!seen.has(key)) entry.stalls++;
      seen.add(key);
      bySite.set(key, entry);
    }
  }
  return [...bySite.values()].map((e) => ({ ...e, share: e.blockedMs / totalMs })).sort((a, b) => b.blockedMs - a.blockedMs);
}

type Cause = NonNullable<StallMessage['cause']>[number];

/** The app function a cause's stack charges (its first app frame, see siteOf); none without app code. */
function causeSite(
  c: Cause,
  functions: (url: string) => ScriptFunctions | undefined,
  lineText: (url: string, line: number) => string | undefined,
): CallSite | undefined {
  const at = c.stack.findIndex(isAppSite);
  return at < 0 ? undefined : siteOf(c.stack[at], at === 0 ? c.line : undefined, functions, lineText);
}

/** A stall still under way at the end of the run counts as never ended from this long (ms). */
export const STUCK_STALL_MIN_MS = 1000;
/**
 * Its last report may come this long before the load window ends (ms) and still cover the end:
 * the watchdog repeats an ongoing stall every 500 ms, and reports it with its stacks at the flush.
 */
export const STUCK_STALL_END_SLACK_MS = 1000;

export interface StuckStall {
  thread: ThreadTelemetry;
  /** Its latest report (ongoing: the loop never came back). */
  stall: StallMessage;
  /** The app function the blocking stack charges, and that stack's share of the samples. */
  site?: CallSite;
  share?: number;
  /** The line of `site` where the thread was sampled most (its hottest line), when it is not the function's first. */
  hotLine?: number;
  /** The hottest blocking stack, leaf first. */
  stack?: CallSite[];
}

/**
 * Stalls of the target threads that never ended: no final report (the loop never came back to
 * send it), still under way at the end of the load window, at least STUCK_STALL_MIN_MS long.
 * With the stacks the watchdog sampled when the run ended (or the latest report that has them).
 */
export function stuckStalls(run: RunData): StuckStall[] {
  const w = loadWindow(run);
  const functions = (url: string): ScriptFunctions | undefined => scriptFunctions(run.functionRanges, url);
  const lineText = (url: string, line: number): string | undefined => runSourceLine(run, url, line);
  const out: StuckStall[] = [];
  for (const thread of targetThreads(run)) {
    const byStart = new Map<number, StallMessage[]>();
    for (const s of thread.stalls) byStart.set(s.start, [...(byStart.get(s.start) ?? []), s]);
    for (const reports of byStart.values()) {
      if (reports.some((r) => !r.ongoing)) continue;
      let latest = reports[0];
      for (const r of reports) if (r.durationMs > latest.durationMs) latest = r;
      if (latest.byAgent !== undefined) continue;
      const end = latest.start + latest.durationMs;
      if (latest.durationMs < STUCK_STALL_MIN_MS || (w !== null && end < w.end - STUCK_STALL_END_SLACK_MS)) continue;
      let sampled: StallMessage | undefined;
      for (const r of reports) if (r.cause !== undefined && (sampled === undefined || r.durationMs > sampled.durationMs)) sampled = r;
      const causes = [...(sampled?.cause ?? [])].sort((a, b) => b.share - a.share);
      const withApp = causes.find((c) => causeSite(c, functions, lineText) !== undefined);
      const top = withApp ?? causes[0];
      const site = withApp ? causeSite(withApp, functions, lineText) : undefined;
      const at = top ? top.stack.findIndex(isAppSite) : -1;
      // The stack as the culprit reads: its app frame is the function it stands for (an inlined callee, a named anonymous one).
      const stack = top?.stack.map((f, i) => (i === at && site ? site : f));
      // The leaf's hottest line is the culprit's own only when the culprit is the leaf as sampled (not a callee inlined into it).
      const leaf = top?.stack[0];
      const own = at === 0 && site !== undefined && leaf !== undefined && site.function === leaf.function && site.line === leaf.line;
      const hotLine = own && top?.line !== undefined && top.line !== site.line ? top.line : undefined;
      out.push({
        thread,
        stall: latest,
        ...(site ? { site } : {}),
        ...(hotLine !== undefined ? { hotLine } : {}),
        ...(top ? { share: top.share, stack } : {}),
      });
    }
  }
  return out.sort((a, b) => a.stall.start - b.stall.start);
}

/**
 * The function a cause's app frame stands for. With the script's function ranges: when the
 * frame is the leaf and its hottest line lies in another function of its script that ran, or
 * is a line of its own calling exactly one function of its script that ran, V8 had inlined that
 * function into the frame, and the time is that function's (as in the CPU profile, see
 * profile/inlined-frames.ts); an anonymous function is named by the one it lies in.
 */
function siteOf(
  frame: CallSite,
  hotLine: number | undefined,
  functions: (url: string) => ScriptFunctions | undefined,
  lineText: (url: string, line: number) => string | undefined,
): CallSite {
  const script = functions(frame.file);
  if (!script) return frame;
  const own = script.at(frame.line - 1, frame.column - 1);
  const hot = hotLine !== undefined ? script.onLine(hotLine - 1) : undefined;
  let inlined =
    typeof hot === 'object' && hot !== own && hot.count > 0 && hot.name !== '' && (own === undefined || !contains(hot, own))
      ? hot
      : undefined;
  // Maglev (Node 22+) charges an inlined callee's ticks to the line that calls it: a hot line of
  // the frame's own that calls one function of the script that ran stands for that function.
  if (!inlined && hot === own && own !== undefined && hotLine !== undefined) {
    const text = lineText(frame.file, hotLine);
    const called =
      text === undefined
        ? []
        : callsOnLine(text)
            .flatMap((name) => script.named(name))
            .filter((f) => f !== own && f.count > 0);
    if (called.length === 1) inlined = called[0];
  }
  if (inlined) return { function: inlined.name, file: frame.file, line: inlined.sl + 1, column: inlined.sc + 1 };
  const name = frame.function === '(anonymous)' ? anonymousNameAt(script, frame.line - 1, frame.column - 1) : undefined;
  return name === undefined ? frame : { ...frame, function: name };
}
