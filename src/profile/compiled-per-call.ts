// Functions built and compiled per call. A template compiled on every request (lodash's
// `_.template(src)` result, `new Function` in a loop) is a new function each time, and V8
// compiles it lazily at its first call: that compile has no frame of its own and is charged to
// the line that calls the fresh function. When that line also spreads (`compiled({ ...quote })`)
// the line's text reads "spread copies" (issue 18.4: 53 % of a handler labelled so).
//
// The profile tells it apart by the callees: every fresh function is a script of its own, so
// under the calling node the same function (name and position) shows under many script ids
// (lodash names them `lodash.templateSources[<n>]`, `new Function` leaves the URL empty).

import type { CpuCallFrame } from './cpu-profile.js';
import { notCalls } from './line-calls.js';

/** The same function under at least this many scripts below one node: built per call. */
export const COMPILED_PER_CALL_MIN_SCRIPTS = 3;

/** Whether callees of one node include one function compiled anew in several scripts. */
export function compiledPerCall(callees: readonly CpuCallFrame[]): boolean {
  const scripts = new Map<string, Set<string>>();
  for (const f of callees) {
    // One function wherever its script came from: the URL without its counters.
    const key = `${f.functionName}|${f.lineNumber}|${f.columnNumber}|${f.url.replace(/\d+/g, '#')}`;
    const ids = scripts.get(key) ?? new Set<string>();
    ids.add(String(f.scriptId));
    if (ids.size >= COMPILED_PER_CALL_MIN_SCRIPTS) return true;
    scripts.set(key, ids);
  }
  return false;
}

const localCall = /(?<![\w$.])([A-Za-z_$][\w$]*)\s*\(/g;

/**
 * Index on `text` of a call of a local function (`compiled(`, not a method `a.b(`, not a callee
 * the profile names, which ran under a frame of its own): where a function built per call is
 * called, or -1.
 */
export function freshFunctionCall(text: string, callees: ReadonlySet<string>): number {
  for (const m of text.matchAll(localCall)) {
    const name = m[1];
    if (notCalls.has(name) || name === 'super' || callees.has(name)) continue;
    if (/\b(new|function)\s+$/.test(text.slice(0, m.index))) continue;
    return m.index;
  }
  return -1;
}
