// Focused work: the app function doing the most work of its own choosing (not the cost of
// answering the request, which every handler pays), and the one doing the most avoidable work
// (compiling, regexps, hashing...): the shares event-loop-blocking's cost rules and culprit rest on.

import type { CpuView, FunctionCost } from './cpu-view.js';
import { appFunctions } from './cpu-view.js';
import { functionKey } from '../../profile/anonymous-names.js';

/**
 * Work a function has V8 or Node do for it that no response needs done per request: compiling
 * code (`new Function`, `eval`, `vm`), regular expressions, hashing, compression, buffer copies,
 * structured clones, linear searches, `util.inspect`, building Errors, Intl formatting. When one
 * app function's such work is at least BLOCKING_AVOIDABLE_SHARE of a busy loop's CPU, the loop
 * is blocked by it whatever a request costs in milliseconds: the share is the same on a fast
 * idle core and on a slow shared one, where the CPU per request is not (a handler compiling
 * four rules with `new Function` per request cost 0.18 ms on a quiet core and 0.5 ms beside a
 * CPU hog, 24-38 % of the CPU compiling either way). The share is serialization's (20 %): a
 * kind of work a fix removes, on a fifth of the loop. JSON has its own finding (serialization);
 * synchronous file and child-process work theirs (sync-io); the function's own JavaScript and a
 * dependency's (a library doing its job) stay under the CPU-per-request floor above.
 */
export const BLOCKING_AVOIDABLE_SHARE = 0.2;
export const BLOCKING_AVOIDABLE_WORK: ReadonlySet<string> = new Set([
  'compile',
  'regex',
  'crypto',
  'zlib',
  'buffer',
  'clone',
  'copy',
  'vm',
  'inspect',
  'errors',
  'intl',
  'search',
]);

/** App functions compared for the focus rule (the rest carry too little to matter). */
const FOCUS_CANDIDATES = 10;

/**
 * The app function doing the most work of its own choosing, with the functions written inside
 * it and the one it was written in ("(anonymous in f)": the callbacks f hands to map, replace,
 * sort...), work a reader counts as f's (a template compiler and its replace callback, 34 % and
 * 23 %), and that work's share of the CPU. The cost of answering the request, which every handler
 * pays (Node's HTTP and socket writes, the framework's res.json: see profile/response-pipeline.ts),
 * is left out: a healthy Express route spends most of its handler's time there.
 */
export interface Focus {
  fn: FunctionCost;
  share: number;
  /** The app function with the most avoidable work (BLOCKING_AVOIDABLE_WORK) of its choosing, and that work's share. */
  avoidable?: { fn: FunctionCost; share: number };
}

export function focusedWork(view: CpuView | undefined, starved = false): Focus | undefined {
  if (!view || view.activeUs <= 0) return undefined;
  const base = view.activeUs - (starved ? unownedNativeUs(view) : 0);
  if (base <= 0) return undefined;
  let best: Focus | undefined;
  let avoidable: Focus['avoidable'];
  for (const fn of appFunctions(view).slice(0, FOCUS_CANDIDATES)) {
    const group = ownGroup(view, fn);
    const chosenUs = group.reduce((a, f) => a + Math.max(0, f.selfUs - view.pipelineOf(f.frameIndex) - issuingUs(view, f)), 0);
    const share = chosenUs / base;
    if (best === undefined || share > best.share) best = { fn, share };
    // Avoidable work answering a request needs (a framework's ETag hash) is no choice: never more than the chosen work.
    const avoidUs = Math.min(
      chosenUs,
      group.reduce((a, f) => a + avoidableUs(view, f), 0),
    );
    if (avoidable === undefined || avoidUs / base > avoidable.share) avoidable = { fn, share: avoidUs / base };
  }
  return best && avoidable ? { ...best, avoidable } : best;
}

/**
 * Work kinds that issue the I/O a request waits for: an HTTP client call (fetch, undici,
 * http.request) and a file read. Like answering the request, every request that needs the I/O
 * pays for starting it, so it is no work the function chose over answering: a healthy Express
 * route making one fetch and one fs.promises read per request "chose" 30-37 % of the CPU with
 * them, against 3 % at most for the healthy handlers above. The waits are io-wait's, synchronous
 * file work is sync-io's, and many calls per request still show in the CPU per request. Async
 * zlib is the same hand-off (profile/work-kind.ts's ZLIB_ASYNC): the compression runs on the thread
 * pool (off-loop-cpu's), the loop builds the stream and queues the chunks.
 */
export const ISSUING_IO_WORK: ReadonlySet<string> = new Set(['http-client', 'fs', 'zlib-async']);

/** The part of a function's attributed time spent issuing I/O (see ISSUING_IO_WORK), µs. */
function issuingUs(view: CpuView, fn: FunctionCost): number {
  return view.workOf(fn.frameIndex).reduce((a, item) => a + (ISSUING_IO_WORK.has(item.work) ? item.us : 0), 0);
}

/** The part of a function's attributed time spent on avoidable kinds of work (see BLOCKING_AVOIDABLE_WORK), µs. */
function avoidableUs(view: CpuView, fn: FunctionCost): number {
  return view.workOf(fn.frameIndex).reduce((a, item) => a + (BLOCKING_AVOIDABLE_WORK.has(item.work) ? item.us : 0), 0);
}

/**
 * Profile samples are wall-clock: a thread that other processes keep off the cores is sampled
 * while it waits for one, and the wait lands in whatever it was running, often a system call
 * with no app code on the stack (a socket's `writev` held 35 % of the samples of a rule-compiling
 * handler beside a CPU hog, on a target that got 18 % of the CPU its loop asked for), or the
 * collector and V8's own unattributed work. On a starved target that time, charged to no app
 * function, is left out of the focused share's base: the work the app chose is then a share of
 * the work its functions ran (the function compiling rules: 18 % of all samples, 31 % of those).
 */
function unownedNativeUs(view: CpuView): number {
  return view.functions.filter((f) => ['native', 'kernel', 'gc', 'program'].includes(f.frame.kind)).reduce((a, f) => a + f.selfUs, 0);
}

/** A function with the functions written inside it and the one it was written in (see focusedWork). */
export function ownGroup(view: CpuView, fn: FunctionCost): FunctionCost[] {
  const key = functionKey(fn.frame);
  return appFunctions(view).filter((f) => functionKey(f.frame) === key);
}
