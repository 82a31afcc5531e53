// Where a value used on a line was built, read from the app's sources (compile-cause.ts uses it):
// a local assigned above the use, or a parameter whose argument the profile's main app caller
// passes, followed up to COMPILE_TRACE_MAX_DEPTH callers. A value is built per call when the
// expression writes a constructor V8 or a library compiles (CREATE) or calls an app function whose
// body does, and nothing memoizes it (MEMO).

import { isAbsolute, join, relative } from 'node:path';
import type { RunData } from '../../run-dir/run-data.js';
import type { Culprit } from '../finding.js';
import type { CpuView } from './cpu-view.js';
import type { Frame } from '../../profile/call-tree.js';
import type { FunctionAt } from './call-counts.js';
import { appCallersOf } from '../../profile/attribution.js';
import { runSourceLine } from '../../profile/run-source-maps.js';
import { scriptFunctions } from '../../profile/script-functions.js';
import { notCalls } from '../../profile/line-calls.js';
import { LOOP_CALLER_MAX_LINES } from './loop-cause.js';
import { frameCulprit } from './culprit.js';
/** Callers followed up from the payer when the value arrives as a parameter. */
export const COMPILE_TRACE_MAX_DEPTH = 3;

/** Building code or a pattern that V8 (or the library) compiles: a regexp, a function, a script, a validator, a template. */
export const CREATE =
  /\bnew\s+RegExp\s*\(|(?<![\w$.])RegExp\s*\(|\bnew\s+Function\s*\(|(?<![\w$.])Function\s*\(|\bnew\s+(?:vm\.)?Script\s*\(|\bcompileFunction\s*\(|\.compile\s*\(|\.template\s*\(/;
/**
 * Memoizing around the constructor: then it is built once, not per call. A Map's `.get`/`.has`,
 * `??`/`||` defaults, a store into an object or array slot (`templates[name] = ...`), a test of a
 * name still unset (`if (!pattern)`), a cache or memo by name.
 */
const MEMO = /\.(?:get|has)\s*\(|\?\?|\|\|\s*\(|\|\|=|\bcache|\bmemo|[\w$\]]\[[^\]]+\]\s*=(?!=)|\bif\s*\(\s*!\s*[\w$.]+\s*\)/i;

export type CompiledKind = 'regexp' | 'function';

export interface Place {
  name: string;
  /** Absolute file. */
  file: string;
  /** 1-based declaration line and column. */
  line: number;
  column: number;
  frameIndex?: number;
}

export const abs = (run: RunData, file: string) => (isAbsolute(file) ? file : join(run.cwd, file));

/** A profile frame as a Place: its culprit name, absolute file and declaration position. */
export function placeOfFrame(run: RunData, f: Frame, frameIndex?: number): Place {
  return {
    name: frameCulprit(f, run.cwd).function,
    file: abs(run, f.file),
    line: f.line,
    column: f.column,
    ...(frameIndex !== undefined ? { frameIndex } : {}),
  };
}

/** The source lines of a function from its declaration to its end (its range, else LOOP_CALLER_MAX_LINES lines). */
function bodyOf(run: RunData, p: Place): string[] {
  const range = scriptFunctions(run.functionRanges, p.file)?.at(p.line - 1, Math.max(0, p.column - 1));
  const exact = range !== undefined && range.sl === p.line - 1;
  const end = exact ? range.el + 1 : p.line + LOOP_CALLER_MAX_LINES;
  const out: string[] = [];
  for (let n = p.line; n <= end; n++) {
    const t = runSourceLine(run, p.file, n);
    if (t === undefined) break;
    out.push(t.replace(/\/\/.*$/, ''));
    // Without its range, a brace closing at the margin ends a top-level function.
    if (!exact && n > p.line && /^}/.test(t)) break;
  }
  return out;
}

/** A name the used line reads: a variable, or with `member` a property of `this` (`this.pattern.test(`). */
export interface UsedName {
  name: string;
  kind: CompiledKind;
  member?: boolean;
}

/** What the used line does with a value held in a name: `re.test(`, `s.replace(re,`, `render(`, `this.re.test(`. */
export function usedNames(text: string): UsedName[] {
  const out: UsedName[] = [];
  const member = (at: number) => (/\bthis\s*\.\s*$/.test(text.slice(0, at)) ? { member: true } : {});
  for (const m of text.matchAll(/([A-Za-z_$][\w$]*)\s*\.\s*(test|exec|runInThisContext|runInNewContext|runInContext)\s*\(/g))
    out.push({ name: m[1], kind: m[2] === 'test' || m[2] === 'exec' ? 'regexp' : 'function', ...member(m.index) });
  for (const m of text.matchAll(/\.(?:match|matchAll|replace|replaceAll|split|search)\s*\(\s*(this\s*\.\s*)?([A-Za-z_$][\w$]*)\s*[,)]/g))
    out.push({ name: m[2], kind: 'regexp', ...(m[1] ? { member: true } : {}) });
  for (const m of text.matchAll(/(?<![\w$.])([A-Za-z_$][\w$]*)\s*\(/g))
    if (!notCalls.has(m[1]) && !/\b(?:new|function)\s+$/.test(text.slice(0, m.index))) out.push({ name: m[1], kind: 'function' });
  return out;
}

export interface Built {
  builder: Culprit;
  via?: Culprit;
  builderAt: FunctionAt;
}

/** The parameters of the function whose declaration opens `head`. */
function paramsOf(head: string): string[] {
  const m = /^[^(]*\(([^)]*)\)/.exec(head) ?? /^\s*(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/.exec(head);
  return m ? m[1].split(',').map((p) => p.trim().replace(/\s*=.*$/, '')) : [];
}

/** The arguments of the first call of `name(` on `text`, split at depth 0. */
function argsOf(text: string, name: string): string[] | undefined {
  const m = new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}\\s*\\(`).exec(text);
  if (!m) return undefined;
  const args: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text.slice(m.index + m[0].length)) {
    if (depth === 0 && (ch === ')' || ch === ',')) {
      args.push(cur.trim());
      if (ch === ')') return args;
      cur = '';
      continue;
    }
    depth += '([{'.includes(ch) ? 1 : ')]}'.includes(ch) ? -1 : 0;
    cur += ch;
  }
  return args;
}

/** Where the app declares a function named `name`: in the profile, else in the file at hand, else in one app script of the run. */
function declarationOf(run: RunData, view: CpuView, name: string, near: string): Place | undefined {
  const i = view.tree.frames.findIndex((f) => f.kind === 'app' && f.name === name && f.line > 0);
  if (i >= 0) {
    const f = view.tree.frames[i];
    return { name, file: abs(run, f.file), line: f.line, column: f.column, frameIndex: i };
  }
  const here = scriptFunctions(run.functionRanges, near)?.named(name) ?? [];
  if (here.length === 1) return { name, file: near, line: here[0].sl + 1, column: here[0].sc + 1 };
  const found = Object.keys(run.functionRanges ?? {})
    .filter((url) => !url.includes('/node_modules/') && !url.startsWith('node:'))
    .flatMap((url) => (scriptFunctions(run.functionRanges, url)?.named(name) ?? []).map((f) => ({ url, f })));
  if (found.length !== 1) return undefined;
  const file = found[0].url.startsWith('file://') ? new URL(found[0].url).pathname : found[0].url;
  return { name, file, line: found[0].f.sl + 1, column: found[0].f.sc + 1 };
}

const culpritAt = (run: RunData, p: Place, line: number): Culprit => ({
  function: p.name,
  file: isAbsolute(p.file) ? relative(run.cwd, p.file) : p.file,
  line,
});

/** The value an expression makes: built right there, or by a function of the app that builds one per call. */
function builtBy(run: RunData, view: CpuView, expr: string, holder: Place, line: number): Built | undefined {
  const at = culpritAt(run, holder, line);
  if (MEMO.test(expr)) return undefined;
  if (CREATE.test(expr)) return { builder: at, builderAt: holder };
  const call = /^(?:await\s+)?(?:[\w$]+\s*\.\s*)*([A-Za-z_$][\w$]*)\s*\(/.exec(expr.trim());
  if (!call || notCalls.has(call[1])) return undefined;
  const decl = declarationOf(run, view, call[1], holder.file);
  if (!decl) return undefined;
  const body = bodyOf(run, decl);
  if (body.some((t) => MEMO.test(t))) return undefined;
  const k = body.findIndex((t) => CREATE.test(t));
  if (k < 0) return undefined;
  return { builder: culpritAt(run, decl, decl.line + k), via: at, builderAt: decl };
}

/** Where `name`, used on line `useLine` of `fn`, was built: assigned above in `fn`, or passed in by its caller. */
export function trace(run: RunData, view: CpuView, fn: Place, name: string, useLine: number, depth: number): Built | undefined {
  const body = bodyOf(run, fn);
  const assign = new RegExp(`(?<![\\w$.])${name.replace(/\$/g, '\\$')}\\s*=(?![=>])\\s*(.+)$`);
  for (let n = Math.min(useLine, fn.line + body.length - 1); n > fn.line; n--) {
    const m = assign.exec(body[n - fn.line]);
    if (m) return builtBy(run, view, m[1], fn, n);
  }
  const k = paramsOf(body[0] ?? '').indexOf(name);
  if (k < 0 || depth >= COMPILE_TRACE_MAX_DEPTH || fn.frameIndex === undefined) return undefined;
  const up = appCallersOf(view.tree, fn.frameIndex)[0];
  if (!up || up.frame < 0 || up.frame === fn.frameIndex) return undefined;
  const f = view.tree.frames[up.frame];
  const caller = placeOfFrame(run, f, up.frame);
  const lines = bodyOf(run, caller);
  for (let i = 1; i < lines.length; i++) {
    const arg = argsOf(lines[i], fn.name)?.[k];
    if (arg === undefined) continue;
    if (/^[A-Za-z_$][\w$]*$/.test(arg)) return trace(run, view, caller, arg, caller.line + i, depth + 1);
    return builtBy(run, view, arg, caller, caller.line + i);
  }
  return undefined;
}

/** Lines read from a file to find where a class sets a property. */
export const COMPILE_MEMBER_MAX_LINES = 2000;

/**
 * Where `this.<name>`, used by a method (`payer`), was built: a class of the payer's file sets it
 * in its constructor from a constructor call (`this.pattern = new RegExp(...)`), and a function on
 * the payer's call path makes a new instance (`new Highlighter(terms)`): one build per call of it.
 */
export function traceMember(run: RunData, view: CpuView, payer: Place, name: string, callers: readonly Place[]): Built | undefined {
  const set = new RegExp(`\\bthis\\s*\\.\\s*${name.replace(/\$/g, '\\$')}\\s*=(?![=>])\\s*(.+)$`);
  const lines: string[] = [];
  for (let n = 1; n <= COMPILE_MEMBER_MAX_LINES; n++) {
    const t = runSourceLine(run, payer.file, n);
    if (t === undefined) break;
    lines.push(t.replace(/\/\/.*$/, ''));
  }
  const at = lines.findIndex((t) => set.test(t));
  if (at < 0 || !CREATE.test(set.exec(lines[at])![1]) || MEMO.test(lines[at])) return undefined;
  const cls = lines
    .slice(0, at)
    .reverse()
    .map((t) => /\bclass\s+([A-Za-z_$][\w$]*)/.exec(t)?.[1])
    .find((c) => c !== undefined);
  if (cls === undefined) return undefined;
  const made = new RegExp(`\\bnew\\s+${cls.replace(/\$/g, '\\$')}\\s*\\(`);
  for (const c of callers) {
    const body = bodyOf(run, c);
    const i = body.findIndex((t, k) => k > 0 && made.test(t));
    if (i < 0) continue;
    const builder: Place = { name: cls, file: payer.file, line: at + 1, column: 1 };
    return { builder: culpritAt(run, builder, at + 1), via: culpritAt(run, c, c.line + i), builderAt: builder };
  }
  return undefined;
}
