// Work paid where code is first used, caused where it is built. V8 compiles a regular expression at
// its first exec (and the function a template compiler returns at its first call): a pattern built
// per request by one function and tested by another is charged to the line of `.test()`, while
// the cause is the function that builds a new one on every call. The profile names the function
// using it; the sources say where the used value comes from: a local assigned from the builder's
// call, or a parameter filled by the caller with one (followed up to COMPILE_TRACE_MAX_DEPTH
// callers). The builder must itself write the constructor (`new RegExp(`, `new Function(`,
// `vm.compileFunction(`, a validator's or template engine's `.compile(`/`.template(`) and keep no
// cache around it: a pattern memoized once is compiled once.

import { isAbsolute, join, relative } from 'node:path';
import type { RunData } from '../../run-dir/run-data.js';
import type { Culprit } from '../finding.js';
import type { CpuView, FunctionCost } from './cpu-view.js';
import { appCallersOf } from '../../profile/attribution.js';
import { hotLine } from '../../profile/hot-line.js';
import { runSourceLine } from '../../profile/run-source-maps.js';
import { scriptFunctions } from '../../profile/script-functions.js';
import { notCalls } from '../../profile/line-calls.js';
import { callsPerRequest, describePath, describePerRequest, pathWithCalls, type FunctionAt, type PathStep } from './call-counts.js';
import { callPath, LOOP_CALLER_MAX_LINES } from './loop-cause.js';
import { frameCulprit } from './culprit.js';
import { atLine } from './loop-blame.js';
import { COMPILE_LABEL } from '../../profile/work-kind.js';
import { BLOCKING_AVOIDABLE_SHARE } from './focused-work.js';

/** The line using the fresh pattern or function must hold at least this share of the payer's own samples. */
export const COMPILE_USE_MIN_LINE_SHARE = 0.5;
/** Callers followed up from the payer when the value arrives as a parameter. */
export const COMPILE_TRACE_MAX_DEPTH = 3;

/** Building code or a pattern that V8 (or the library) compiles: a regexp, a function, a script, a validator, a template. */
const CREATE =
  /\bnew\s+RegExp\s*\(|(?<![\w$.])RegExp\s*\(|\bnew\s+Function\s*\(|(?<![\w$.])Function\s*\(|\bnew\s+(?:vm\.)?Script\s*\(|\bcompileFunction\s*\(|\.compile\s*\(|\.template\s*\(/;
/** Memoizing around the constructor: then it is built once, not per call. */
const MEMO = /\.(?:get|has)\s*\(|\?\?=|\|\|=|\bcache\b|\bmemo/i;

export type CompiledKind = 'regexp' | 'function';

export interface CompileCause {
  kind: CompiledKind;
  /** The function that pays, at the line that uses the fresh value. */
  paidAt: Culprit;
  /** The function building a new one per call, at the line that builds it. */
  builder: Culprit;
  /** Where the builder is called, when that is another function than the builder (its call line). */
  via?: Culprit;
  /** From the request's first app function down to the payer, with calls per request. */
  path: PathStep[];
  builderCallsPerRequest?: number;
  /** When the two places together raised the finding (compilePair): their share of the active CPU. */
  pairShare?: number;
}

interface Place {
  name: string;
  /** Absolute file. */
  file: string;
  /** 1-based declaration line and column. */
  line: number;
  column: number;
  frameIndex?: number;
}

const abs = (run: RunData, file: string) => (isAbsolute(file) ? file : join(run.cwd, file));

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

/** What the used line does with a value held in a name: `re.test(`, `s.replace(re,`, `render(`. */
function usedNames(text: string): { name: string; kind: CompiledKind }[] {
  const out: { name: string; kind: CompiledKind }[] = [];
  for (const m of text.matchAll(/([A-Za-z_$][\w$]*)\s*\.\s*(test|exec|runInThisContext|runInNewContext|runInContext)\s*\(/g))
    out.push({ name: m[1], kind: m[2] === 'test' || m[2] === 'exec' ? 'regexp' : 'function' });
  for (const m of text.matchAll(/\.(?:match|matchAll|replace|replaceAll|split|search)\s*\(\s*([A-Za-z_$][\w$]*)\s*[,)]/g))
    out.push({ name: m[1], kind: 'regexp' });
  for (const m of text.matchAll(/(?<![\w$.])([A-Za-z_$][\w$]*)\s*\(/g))
    if (!notCalls.has(m[1]) && !/\b(?:new|function)\s+$/.test(text.slice(0, m.index))) out.push({ name: m[1], kind: 'function' });
  return out;
}

interface Built {
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
function trace(run: RunData, view: CpuView, fn: Place, name: string, useLine: number, depth: number): Built | undefined {
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
  const caller: Place = {
    name: frameCulprit(f, run.cwd).function,
    file: abs(run, f.file),
    line: f.line,
    column: f.column,
    frameIndex: up.frame,
  };
  const lines = bodyOf(run, caller);
  for (let i = 1; i < lines.length; i++) {
    const arg = argsOf(lines[i], fn.name)?.[k];
    if (arg === undefined) continue;
    if (/^[A-Za-z_$][\w$]*$/.test(arg)) return trace(run, view, caller, arg, caller.line + i, depth + 1);
    return builtBy(run, view, arg, caller, caller.line + i);
  }
  return undefined;
}

/**
 * When `top` pays for compiling a regexp or function that another function builds per call: where
 * it is paid, who builds it, and the path with calls per request. Undefined when the value is
 * built in `top` itself (paid and caused in one place), cached, or cannot be traced.
 */
export function compileCause(run: RunData, view: CpuView, top: FunctionCost): CompileCause | undefined {
  const f = top.frame;
  if (f.kind !== 'app' || f.line <= 0) return undefined;
  const hot = hotLine(view.tree, top.frameIndex);
  if (!hot || hot.share < COMPILE_USE_MIN_LINE_SHARE) return undefined;
  const payer: Place = {
    name: frameCulprit(f, run.cwd).function,
    file: abs(run, f.file),
    line: f.line,
    column: f.column,
    frameIndex: top.frameIndex,
  };
  const text = runSourceLine(run, payer.file, hot.line)?.replace(/\/\/.*$/, '');
  if (text === undefined || CREATE.test(text)) return undefined;
  for (const use of usedNames(text)) {
    const built = trace(run, view, payer, use.name, hot.line, 0);
    if (!built || (built.builder.function === payer.name && built.builder.file === frameCulprit(f, run.cwd).file)) continue;
    const path = pathWithCalls(
      run,
      callPath(view, top.frameIndex).map((fr) => ({ ...fr, function: frameCulprit(fr, run.cwd).function })),
    );
    const rate = callsPerRequest(run, built.builderAt);
    return {
      kind: use.kind,
      paidAt: atLine(frameCulprit(f, run.cwd), hot.line),
      builder: built.builder,
      ...(built.via && built.via.function !== built.builder.function ? { via: built.via } : {}),
      path,
      ...(rate ? { builderCallsPerRequest: Math.round(rate.perRequest * 100) / 100 } : {}),
    };
  }
  return undefined;
}

/** The sentence saying where the compile is paid and where it is caused. */
export function describeCompileCause(c: CompileCause): string {
  const what = c.kind === 'regexp' ? 'regular expression' : 'function';
  const calls = c.builderCallsPerRequest !== undefined ? `, ${describePerRequest(c.builderCallsPerRequest)} per request` : '';
  const via = c.via ? `, called at ${c.via.file}:${c.via.line} in ${c.via.function}${calls}` : calls;
  return (
    ` The ${what} used at ${c.paidAt.file}:${c.paidAt.line} is built anew on every call by ${c.builder.function} (${c.builder.file}:${c.builder.line}${via}),` +
    ` and V8 compiles a new ${c.kind === 'regexp' ? 'pattern' : 'function'} at its first use: the cost is paid in ${c.paidAt.function}, and caused by ${c.builder.function}.` +
    (c.pairShare !== undefined
      ? ` Building it and its first use together take ${Math.round(c.pairShare * 100)} % of the CPU, none alone ${Math.round(BLOCKING_AVOIDABLE_SHARE * 100)} %.`
      : '') +
    (c.path.length > 1 ? ` Path: ${describePath(c.path)}.` : '')
  );
}

/** Evidence: where it is paid (`paidIn`, at the line of use), who builds it, and the path with calls per request. */
export function compileCauseEvidence(c: CompileCause): Record<string, unknown> {
  return {
    compiled: c.kind,
    paidIn: c.paidAt,
    builtBy: c.builder,
    ...(c.via ? { builtVia: c.via } : {}),
    ...(c.builderCallsPerRequest !== undefined ? { builderCallsPerRequest: c.builderCallsPerRequest } : {}),
    ...(c.pairShare !== undefined ? { compilePairShare: c.pairShare } : {}),
    callPath: c.path.map((s) => ({
      function: s.function,
      file: s.file,
      line: s.line,
      ...(s.callsPerRequest !== undefined ? { callsPerRequest: s.callsPerRequest } : {}),
    })),
  };
}

/**
 * The payer's work as the compile cause reads it: a line using a regexp held in a name
 * (`text.replace(pattern, ...)`) is not recognised as regexp work by its text alone (a string
 * replace reads the same), but a traced `new RegExp` says it is.
 */
export function withCompiledWork<W extends { dominant?: string; label?: string }>(work: W, c: CompileCause | undefined): W {
  if (!c || work.dominant !== undefined) return work;
  return c.kind === 'regexp'
    ? { ...work, dominant: 'regex', label: 'regular expressions' }
    : { ...work, dominant: 'compile', label: COMPILE_LABEL };
}

/** App functions (by attributed self time) tried as payers of a compile caused elsewhere. */
export const COMPILE_PAIR_CANDIDATES = 5;

/**
 * A compile paid in two places: the builder compiles (or parses) what it builds, and the payer
 * compiles the rest at its first use (a template compiler returning the inner function a
 * `new Function` makes, which V8 compiles lazily at its first call: 14 % and 13 % of the samples
 * on a starved core, neither an avoidable 20 % alone). The most costly such pair: the payer, its
 * cause, and the share of the active CPU the two spend on it (the payer's use line, the builder's
 * compiling or regexp work).
 */
export function compilePair(run: RunData, view: CpuView): { payer: FunctionCost; cause: CompileCause; share: number } | undefined {
  if (view.activeUs <= 0) return undefined;
  let best: { payer: FunctionCost; cause: CompileCause; share: number } | undefined;
  const apps = view.functions.filter((f) => f.frame.kind === 'app').slice(0, COMPILE_PAIR_CANDIDATES);
  for (const fn of apps) {
    const cause = compileCause(run, view, fn);
    if (!cause) continue;
    const hot = hotLine(view.tree, fn.frameIndex);
    const builder = view.functions.find(
      (f) => f.frame.name === cause.builder.function && frameCulprit(f.frame, run.cwd).file === cause.builder.file,
    );
    const kinds = cause.kind === 'regexp' ? ['regex', 'compile'] : ['compile', 'regex'];
    const built =
      builder && builder !== fn ? view.workOf(builder.frameIndex).reduce((a, i) => a + (kinds.includes(i.work) ? i.us : 0), 0) : 0;
    const share = (fn.selfUs * (hot?.share ?? 0) + built) / view.activeUs;
    if (!best || share > best.share) best = { payer: fn, cause: { ...cause, pairShare: Math.round(share * 1000) / 1000 }, share };
  }
  return best;
}
