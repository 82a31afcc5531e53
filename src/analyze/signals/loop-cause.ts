// Work paid in one place and caused in another: a helper called once per item by a loop carries
// the CPU, yet the loop that calls it thousands of times per request is what makes the cost. The
// CPU profile names the helper and the app function it was called from; the caller's source
// says whether the call sits inside a loop (a `for`/`while` block, or the callback of `map`,
// `forEach`, `filter`, `reduce`...). Also the path from the request's first app frame down to the
// helper, as the profile's app callers give it.

import { isAbsolute, join } from 'node:path';
import type { RunData } from '../../run-dir/run-data.js';
import type { Frame } from '../../profile/call-tree.js';
import type { CallSite } from '../../agent/protocol.js';
import type { CpuView, FunctionCost } from './cpu-view.js';
import { appCallersOf } from '../../profile/attribution.js';
import { runSourceLine } from '../../profile/run-source-maps.js';
import { scriptFunctions } from '../../profile/script-functions.js';

/** The caller must account for at least this share of the helper's time to be its cause. */
export const LOOP_CALLER_MIN_SHARE = 0.8;
/** Without the function's range, this many lines below its start are read. */
export const LOOP_CALLER_MAX_LINES = 120;

export interface LoopCaller {
  /** The app function holding the loop, its line, and the line of the call to the helper inside it. */
  caller: Frame;
  callerCost?: FunctionCost;
  loopLine: number;
  callLine: number;
  /** The helper's time reached from this caller, as a share of all its time. */
  share: number;
  /** App frames from the outermost down to the helper (included). */
  path: Frame[];
}

const LOOP =
  /\bfor\s*(?:await\s*)?\(|\bwhile\s*\(|\.(?:map|forEach|filter|reduce|reduceRight|flatMap|some|every|find|findIndex|findLast|sort)\s*\(/;

/** Whether the call on line `call` (1-based) sits in a loop that starts at or above it, within [start, call]. */
export function loopAround(lines: readonly string[], start: number, call: number): number | undefined {
  const text = (n: number) => (lines[n - start] ?? '').replace(/\/\/.*$/, '');
  for (let k = call; k >= start; k--) {
    const t = text(k);
    const m = LOOP.exec(t);
    if (!m) continue;
    if (k === call) return k;
    // The block the loop opens must still be open on the call's line.
    let depth = 0;
    for (const ch of t.slice(m.index)) depth += ch === '{' || ch === '(' ? 1 : ch === '}' || ch === ')' ? -1 : 0;
    for (let j = k + 1; j < call; j++) for (const ch of text(j)) depth += ch === '{' || ch === '(' ? 1 : ch === '}' || ch === ')' ? -1 : 0;
    // A loop without braces holds the next line only.
    if (depth > 0 || (k === call - 1 && depth === 0 && /^\s*(?:for|while)\b/.test(t) && !/[;}]\s*$/.test(t))) return k;
  }
  return undefined;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The loop in the app function that makes most of `fn`'s calls, when there is one. */
export function loopCaller(run: RunData, view: CpuView, fn: FunctionCost): LoopCaller | undefined {
  const tree = view.tree;
  const name = fn.frame.name;
  if (!/^[\w$]+$/.test(name)) return undefined;
  const callers = appCallersOf(tree, fn.frameIndex);
  const total = callers.reduce((a, c) => a + c.us, 0);
  const top = callers[0];
  if (!top || top.frame < 0 || top.frame === fn.frameIndex || total <= 0 || top.us / total < LOOP_CALLER_MIN_SHARE) return undefined;
  const caller = tree.frames[top.frame];
  if (caller.line <= 0) return undefined;
  const file = isAbsolute(caller.file) ? caller.file : join(run.cwd, caller.file);
  const range = scriptFunctions(run.functionRanges, file)?.at(caller.line - 1, Math.max(0, caller.column - 1));
  const start = caller.line;
  const end = range && range.sl === caller.line - 1 ? range.el + 1 : caller.line + LOOP_CALLER_MAX_LINES;
  const lines: string[] = [];
  for (let n = start; n <= end; n++) {
    const t = runSourceLine(run, file, n);
    if (t === undefined) break;
    lines.push(t);
  }
  // A call, or the function handed to an array method as its callback (`words.map(escape)`).
  const call = new RegExp(
    `(?<![\\w$])${escapeRe(name)}\\s*\\(|\\.(?:map|forEach|filter|reduce|flatMap|some|every|find|sort)\\(\\s*${escapeRe(name)}\\s*[,)]`,
  );
  for (let i = 0; i < lines.length; i++) {
    if (i === 0 && new RegExp(`function\\s+${escapeRe(name)}\\b`).test(lines[i])) continue;
    if (!call.test(lines[i].replace(/\/\/.*$/, ''))) continue;
    const loopLine = loopAround(lines, start, start + i);
    if (loopLine === undefined) continue;
    return {
      caller,
      ...(view.functions.find((c) => c.frameIndex === top.frame)
        ? { callerCost: view.functions.find((c) => c.frameIndex === top.frame)! }
        : {}),
      loopLine,
      callLine: start + i,
      share: top.us / total,
      path: callPath(view, fn.frameIndex),
    };
  }
  return undefined;
}

/** App frames from the outermost app caller down to `frameIndex`, following the caller with the most time. */
export function callPath(view: CpuView, frameIndex: number): Frame[] {
  const path = [view.tree.frames[frameIndex]];
  const seen = new Set([frameIndex]);
  let at = frameIndex;
  for (let i = 0; i < 8; i++) {
    const up = appCallersOf(view.tree, at)[0];
    if (!up || up.frame < 0 || seen.has(up.frame)) break;
    seen.add(up.frame);
    path.unshift(view.tree.frames[up.frame]);
    at = up.frame;
  }
  return path;
}

/**
 * The loop a call site sits in, within its own function (from where V8 says the function starts):
 * a handler awaiting an I/O call once per item serialises the waits there. Its line, or undefined.
 */
export function loopAtSite(run: RunData, site: CallSite): number | undefined {
  if (site.functionLine === undefined || site.functionLine > site.line || site.line - site.functionLine > LOOP_CALLER_MAX_LINES)
    return undefined;
  const lines: string[] = [];
  for (let n = site.functionLine; n <= site.line; n++) {
    const t = runSourceLine(run, site.file, n);
    if (t === undefined) return undefined;
    lines.push(t);
  }
  return loopAround(lines, site.functionLine, site.line);
}

/**
 * A loop in the function of `site` that awaits inside its body (`for (...) x = await f(...)`),
 * when the site's own call is not in one: the waits a helper makes further down (a repository's
 * query wrapper) are serialised by the loop of the function that awaits the helper per item,
 * while the stack the hook kept may be that of another call of the same function. Its line, or
 * undefined. The function's end comes from the run's function ranges (else
 * LOOP_CALLER_MAX_LINES lines are read).
 */
export function awaitLoopIn(run: RunData, site: CallSite): number | undefined {
  const start = site.functionLine;
  if (start === undefined || start <= 0) return undefined;
  const range = scriptFunctions(run.functionRanges, site.file)?.at(start - 1, Math.max(0, (site.functionColumn ?? 1) - 1));
  const end = range && range.sl === start - 1 ? range.el + 1 : start + LOOP_CALLER_MAX_LINES;
  const lines: string[] = [];
  for (let n = start; n <= end; n++) {
    const t = runSourceLine(run, site.file, n);
    if (t === undefined) break;
    lines.push(t);
  }
  for (let i = 1; i < lines.length; i++) {
    if (!/(?<![\w$])await\s/.test(lines[i].replace(/\/\/.*$/, ''))) continue;
    const loop = loopAround(lines, start, start + i);
    if (loop !== undefined) return loop;
  }
  return undefined;
}
