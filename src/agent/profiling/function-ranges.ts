// Where each function of a script begins and ends, as V8 sees the script. V8's CPU profiler
// charges the self time of a function inlined into an optimized caller to the caller: a hot
// `deriveToken` inlined into the route handler shows as the handler. The profile keeps the
// line of each tick (positionTicks, the inlined callee's line), but not which function that
// line belongs to. At the end of the run the agent asks V8 for the function ranges of the
// profiled scripts (best-effort coverage: no instrumentation, just what V8 already holds) and
// the scripts' text to turn offsets into lines, and writes them to
// `functions-<pid>-<tid>.json`; the CLI gives each tick line back to its function
// (src/profile/inlined-frames.ts). Lines and columns are 0-based, like a V8 call frame's.

/** One function as Profiler.getBestEffortCoverage reports it (the first range is its extent). */
export interface CoverageFunction {
  functionName: string;
  ranges: { startOffset: number; endOffset: number; count: number }[];
}

/** [name, startLine, startColumn, endLine, endColumn, invocations] (0-based; end exclusive). */
export type FunctionRangeRow = [string, number, number, number, number, number];

export function functionRangesFileName(pid: number, threadId: number): string {
  return `functions-${pid}-${threadId}.json`;
}

/** Offsets where each line of `source` starts. */
export function lineStarts(source: string): number[] {
  const starts = [0];
  for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function position(starts: number[], offset: number): [number, number] {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return [lo, offset - starts[lo]];
}

/** The functions of one script as rows, in the script's line/column terms. */
export function functionRows(functions: readonly CoverageFunction[], source: string): FunctionRangeRow[] {
  const starts = lineStarts(source);
  const rows: FunctionRangeRow[] = [];
  for (const f of functions) {
    const r = f.ranges[0];
    if (!r || !(r.endOffset > r.startOffset)) continue;
    const [sl, sc] = position(starts, r.startOffset);
    const [el, ec] = position(starts, r.endOffset);
    rows.push([f.functionName, sl, sc, el, ec, r.count]);
  }
  return rows;
}

/** A profile node as far as the capture needs it. */
interface ProfiledNode {
  callFrame: { scriptId: string | number; url: string; functionName?: string };
  hitCount?: number;
  positionTicks?: unknown[];
}

/**
 * The scripts worth ranges: those of profile nodes with ticks on their lines (inlined callees
 * hide there) or of anonymous functions (named by the function they lie in), outside node's
 * own code (`node:`), scripts without a URL and the agent's own (URLs starting with `exclude`).
 */
export function profiledScripts(nodes: readonly ProfiledNode[], into: Set<string>, exclude?: string): void {
  for (const n of nodes) {
    const url = n.callFrame.url;
    const ticked = Boolean(n.hitCount) && Boolean(n.positionTicks?.length);
    if (!(ticked || n.callFrame.functionName === '') || url === '' || url.startsWith('node:')) continue;
    if (exclude !== undefined && url.startsWith(exclude)) continue;
    into.add(String(n.callFrame.scriptId));
  }
}
