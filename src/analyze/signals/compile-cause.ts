// Work paid where code is first used, caused where it is built. V8 compiles a regular expression at
// its first exec (and the function a template compiler returns at its first call): a pattern built
// per request by one function and tested by another is charged to the line of `.test()`, while
// the cause is the function that builds a new one on every call. The profile names the function
// using it; the sources say where the used value comes from: a local assigned from the builder's
// call, a parameter filled by the caller with one (followed up to COMPILE_TRACE_MAX_DEPTH
// callers), or a property of `this` set by the constructor of a class made per request
// (compile-trace.ts). The builder must itself write the constructor (`new RegExp(`,
// `new Function(`, `vm.compileFunction(`, a validator's or template engine's `.compile(`/
// `.template(`) and keep no cache around it: a pattern memoized once is compiled once.

import type { RunData } from '../../run-dir/run-data.js';
import type { Culprit } from '../finding.js';
import type { CpuView, FunctionCost } from './cpu-view.js';
import { hotLine } from '../../profile/hot-line.js';
import { runSourceLine } from '../../profile/run-source-maps.js';
import { callsPerRequest, describePath, describePerRequest, pathWithCalls, type PathStep } from './call-counts.js';
import { callPath } from './loop-cause.js';
import { abs, CREATE, placeOfFrame, trace, traceMember, usedNames, type CompiledKind, type Place } from './compile-trace.js';
import { frameCulprit } from './culprit.js';
import { atLine } from './loop-blame.js';
import { COMPILE_LABEL } from '../../profile/work-kind.js';
import { BLOCKING_AVOIDABLE_SHARE } from './focused-work.js';

/** The line using the fresh pattern or function must hold at least this share of the payer's own samples. */
export const COMPILE_USE_MIN_LINE_SHARE = 0.5;

/**
 * A pattern whose time is mostly in its `RegExp: <source>` frames runs as native code: V8 tiered
 * it up, so it was not compiled anew (a fresh pattern run once stays in the interpreter, which has
 * no frame: the probes' payers had none). Its execution is the cost, and the payer stays the culprit.
 */
export const COMPILE_EXEC_MAX_SHARE = 0.5;

/** The share of `fn`'s time spent in `RegExp:` frames it called. */
function regexpCodeShare(view: CpuView, fn: FunctionCost): number {
  const t = view.tree;
  let us = 0;
  for (let i = 1; i < t.frame.length; i++) {
    if (t.frame[t.parent[i]] === fn.frameIndex && t.frames[t.frame[i]].name.startsWith('RegExp: ')) us += t.total[i];
  }
  return fn.totalUs > 0 ? us / fn.totalUs : 0;
}

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

/** The app functions above `frameIndex` on its main call path, nearest first. */
function callersOf(run: RunData, view: CpuView, frameIndex: number): Place[] {
  return callPath(view, frameIndex)
    .slice(0, -1)
    .reverse()
    .map((f) => placeOfFrame(run, f));
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
  const payer = placeOfFrame(run, f, top.frameIndex);
  const text = runSourceLine(run, payer.file, hot.line)?.replace(/\/\/.*$/, '');
  if (text === undefined || CREATE.test(text)) return undefined;
  const executing = regexpCodeShare(view, top) >= COMPILE_EXEC_MAX_SHARE;
  for (const use of usedNames(text)) {
    if (use.kind === 'regexp' && executing) continue;
    const built = use.member
      ? traceMember(run, view, payer, use.name, callersOf(run, view, top.frameIndex))
      : trace(run, view, payer, use.name, hot.line, 0);
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

/**
 * The builder's part: its compiling and regexp work, else (a `new RegExp(` line, which reads as no
 * kind of work: V8 parses the pattern there) the samples of its hottest line when that line builds.
 */
function builderCompileUs(run: RunData, view: CpuView, builder: FunctionCost, kinds: readonly string[]): number {
  const work = view.workOf(builder.frameIndex).reduce((a, i) => a + (kinds.includes(i.work) ? i.us : 0), 0);
  if (work > 0) return work;
  const hot = hotLine(view.tree, builder.frameIndex);
  const text = hot ? runSourceLine(run, abs(run, builder.frame.file), hot.line) : undefined;
  return hot && text !== undefined && CREATE.test(text) ? builder.selfUs * hot.share : 0;
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
    const built = builder && builder !== fn ? builderCompileUs(run, view, builder, kinds) : 0;
    const share = (fn.selfUs * (hot?.share ?? 0) + built) / view.activeUs;
    if (!best || share > best.share) best = { payer: fn, cause: { ...cause, pairShare: Math.round(share * 1000) / 1000 }, share };
  }
  return best;
}
