// What the stalls were doing. While a thread is stalled the agent's watchdog samples it, and
// the stall's final report carries its hottest stacks (leaf first) with their share of the
// stall's samples. Each stack's share of the stall's duration is blocked time of the first app
// frame on it: the user's code that did the blocking work or asked a dependency or node for it.
// This names what blocked the loop when no CPU profile does: a run with --no-profile, or a block
// the profile's window missed.

import type { CallSite } from '../../agent/protocol.js';
import type { RunData } from '../../run-dir/run-data.js';
import { loadWindow, targetThreads, windowStalls } from './load-window.js';
import { isAppSite } from './culprit.js';
import { ScriptFunctions } from '../../profile/script-functions.js';
import { anonymousIn } from '../../profile/anonymous-names.js';

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
  const stalls = targetThreads(run).flatMap((t) => windowStalls(t, w)).filter((s) => !s.ongoing);
  const totalMs = stalls.reduce((a, s) => a + s.durationMs, 0);
  if (totalMs <= 0) return [];
  const bySite = new Map<string, StallCulprit>();
  const named = anonymousNamer(run);
  for (const s of stalls) {
    const seen = new Set<string>();
    for (const c of s.cause ?? []) {
      const found = c.stack.find(isAppSite);
      if (found === undefined) continue;
      const site = named(found);
      const key = `${site.function}\u0000${site.file}:${site.line}:${site.column}`;
      const entry = bySite.get(key) ?? { site, blockedMs: 0, share: 0, stalls: 0 };
      entry.blockedMs += c.share * s.durationMs;
      if (!seen.has(key)) entry.stalls++;
      seen.add(key);
      bySite.set(key, entry);
    }
  }
  return [...bySite.values()]
    .map((e) => ({ ...e, share: e.blockedMs / totalMs }))
    .sort((a, b) => b.blockedMs - a.blockedMs);
}

/** Names an anonymous site by the function it lies in, from the run's function ranges (as in its profiles). */
function anonymousNamer(run: RunData): (site: CallSite) => CallSite {
  const ranges = run.functionRanges;
  const scripts = new Map<string, ScriptFunctions>();
  return (site) => {
    if (site.function !== '(anonymous)' || !ranges || !Object.hasOwn(ranges, site.file)) return site;
    let script = scripts.get(site.file);
    if (script === undefined) scripts.set(site.file, (script = new ScriptFunctions(site.file, ranges[site.file])));
    const enclosing = script.enclosingName(site.line - 1, site.column - 1);
    return enclosing === undefined ? site : { ...site, function: anonymousIn(enclosing) };
  };
}
