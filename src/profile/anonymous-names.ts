// Says where an anonymous function was written. A Promise executor, a callback passed to
// map() or an event listener has no name, and "(anonymous) lib/render.js:10" sends the reader
// to the file to find out what it belongs to. With the function ranges of the run
// (script-functions.ts) the profile names it by the named function it lies in:
// "(anonymous in computeInWorker)", in the hotspots, the culprits and the flame graph alike.

import type { CpuCallFrame } from './cpu-profile.js';
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
