// Says where an anonymous function was written. A Promise executor, a callback passed to
// map() or an event listener has no name, and "(anonymous) lib/render.js:10" sends the reader
// to the file to find out what it belongs to. With the function ranges of the run
// (script-functions.ts) the profile names it by the named function it lies in:
// "(anonymous in computeInWorker)", in the hotspots, the culprits and the flame graph alike.

import type { CpuCallFrame, CpuProfileNode } from './cpu-profile.js';
import { scriptFunctions, type FunctionRanges, type ScriptFunctions } from './script-functions.js';

/** The display name of an anonymous function written inside `enclosing`. */
export const anonymousIn = (enclosing: string): string => `(anonymous in ${enclosing})`;

/** The named function a frame's name belongs to: `f` for `f` and for `(anonymous in f)`. */
export function ownerOf(name: string): string {
  return /^\(anonymous in (.+)\)$/.exec(name)?.[1] ?? name;
}

/**
 * One key per place to fix: a named function together with the anonymous ones written inside it
 * ("f" and "(anonymous in f)"); an anonymous function in no named one (a top-level arrow) by its
 * own position, since two of them in one file are unrelated.
 */
export function functionKey(f: { name: string; file: string; line: number; column?: number }): string {
  const owner = ownerOf(f.name);
  return owner === '(anonymous)' || owner === '' ? `${f.file}\0${owner}\0${f.line}:${f.column ?? 0}` : `${f.file}\0${owner}`;
}

/**
 * The display name of the anonymous function starting at `line`, `column` (0-based) of `script`:
 * "(anonymous in f)" when it lies in a named function f, else undefined.
 */
export function anonymousNameAt(script: ScriptFunctions, line: number, column: number): string | undefined {
  const enclosing = script.enclosingName(line, column);
  return enclosing === undefined ? undefined : anonymousIn(enclosing);
}

/** Renames, in place, the anonymous call frames (of a CPU or heap profile) that lie in a named function. */
export function nameAnonymousFrames(frames: Iterable<CpuCallFrame>, ranges: FunctionRanges | undefined): void {
  if (!ranges || Object.keys(ranges).length === 0) return;
  for (const cf of frames) {
    const script = cf.functionName === '' ? scriptFunctions(ranges, cf.url) : undefined;
    const name = script && anonymousNameAt(script, cf.lineNumber, cf.columnNumber);
    if (name !== undefined) cf.functionName = name;
  }
}

/**
 * The fallback for a script the run has no function ranges of (V8's best-effort coverage leaves
 * out a script whose functions a full GC emptied before the agent's capture: a worker-per-request
 * probe's `renderThumbnail` module, round r): an anonymous function whose every call in the
 * profile comes straight from one named function of the same script that starts before it
 * (builtins between them, which have no script, skipped) was written inside it, as a Promise
 * executor or an inline map callback is. A function also called from anywhere else (an event
 * emitter, a timer) keeps "(anonymous)".
 */
export function nameAnonymousByCaller(nodes: readonly CpuProfileNode[], ranges: FunctionRanges | undefined): void {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const parent = new Map<number, CpuProfileNode>();
  for (const n of nodes) for (const c of n.children ?? []) if (byId.has(c)) parent.set(c, n);
  const callers = new Map<string, { names: Set<string>; frames: CpuCallFrame[] }>();
  for (const n of nodes) {
    const cf = n.callFrame;
    if (cf.functionName !== '' || cf.url === '' || scriptFunctions(ranges, cf.url) !== undefined) continue;
    const key = `${cf.url}:${cf.lineNumber}:${cf.columnNumber}`;
    const entry = callers.get(key) ?? { names: new Set<string>(), frames: [] };
    callers.set(key, entry);
    entry.frames.push(cf);
    let p = parent.get(n.id);
    while (p && p.callFrame.url === '' && !p.callFrame.functionName.startsWith('(')) p = parent.get(p.id);
    const pf = p?.callFrame;
    const encloses =
      pf !== undefined &&
      pf.url === cf.url &&
      pf.functionName !== '' &&
      !pf.functionName.startsWith('(') &&
      (pf.lineNumber < cf.lineNumber || (pf.lineNumber === cf.lineNumber && pf.columnNumber < cf.columnNumber));
    // Any other caller makes the place it was written unknown: the empty name marks it.
    entry.names.add(encloses ? pf.functionName : '');
  }
  for (const { names, frames } of callers.values()) {
    const [only] = names;
    if (names.size !== 1 || only === '') continue;
    for (const cf of frames) cf.functionName = anonymousIn(only);
  }
}
