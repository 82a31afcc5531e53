// Says where an anonymous function was written. A Promise executor, a callback passed to
// map() or an event listener has no name, and "(anonymous) lib/render.js:10" sends the reader
// to the file to find out what it belongs to. With the function ranges of the run
// (script-functions.ts) the profile names it by the named function it lies in:
// "(anonymous in computeInWorker)", in the hotspots, the culprits and the flame graph alike.

import type { CpuCallFrame } from './cpu-profile.js';
import { ScriptFunctions, type FunctionRanges } from './script-functions.js';

/** The display name of an anonymous function written inside `enclosing`. */
export const anonymousIn = (enclosing: string): string => `(anonymous in ${enclosing})`;

/** The named function a frame's name belongs to: `f` for `f` and for `(anonymous in f)`. */
export function ownerOf(name: string): string {
  return /^\(anonymous in (.+)\)$/.exec(name)?.[1] ?? name;
}

/** Renames, in place, the anonymous call frames (of a CPU or heap profile) that lie in a named function. */
export function nameAnonymousFrames(frames: Iterable<CpuCallFrame>, ranges: FunctionRanges | undefined): void {
  if (!ranges || Object.keys(ranges).length === 0) return;
  const scripts = new Map<string, ScriptFunctions>();
  for (const cf of frames) {
    if (cf.functionName !== '' || !Object.hasOwn(ranges, cf.url)) continue;
    let script = scripts.get(cf.url);
    if (script === undefined) scripts.set(cf.url, (script = new ScriptFunctions(cf.url, ranges[cf.url])));
    const enclosing = script.enclosingName(cf.lineNumber, cf.columnNumber);
    if (enclosing !== undefined) cf.functionName = anonymousIn(enclosing);
  }
}
