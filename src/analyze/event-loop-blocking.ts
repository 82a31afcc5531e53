// Event-loop blocking: the loop is busy and each request (or a periodic job) holds it for a
// long synchronous stretch. Signals over the load window: utilization, delay, stalls and CPU
// per request. Culprit: the app function carrying the most attributed self time in the CPU
// profile, with the kind of work (regex, crypto, zlib, JSON...) it was doing; without one (no
// profile, or the cost spread), the app function the stalls' own samples blame; without any,
// the kind of work that dominates the CPU and where it ran (a body parser's JSON.parse, a schema's
// regexp, tied to the place the app's source writes its pattern), with that kind's advice.

import type { RunData } from '../run-dir/run-data.js';
import type { Culprit, Finding } from './finding.js';
import { immediateYields } from './signals/immediate-yields.js';
import { loopStats, type LoopStats } from './signals/loop-stats.js';
import { appFunctions, cpuViewOf, samplesOf, type CpuView, type FunctionCost } from './signals/cpu-view.js';
import { longestHolder, longStretches, type LongStretches } from '../profile/long-stretches.js';
import { describeCulprit, frameCulprit, siteCulprit } from './signals/culprit.js';
import { stallCulprits, type StallCulprit } from './signals/stall-causes.js';
import { functionKey } from '../profile/anonymous-names.js';
import { entryShares } from '../profile/entry-points.js';
import { attributedSelf, firstAppAncestor } from '../profile/attribution.js';
import { hotLine } from '../profile/hot-line.js';
import { ownCodeWeight } from '../profile/engine-frames.js';
import type { Frame } from '../profile/call-tree.js';
import { describeWork, workSummary } from './signals/culprit-work.js';
import { round } from './signals/stats.js';
import { blockingAdvice } from './event-loop-blocking.advice.js';
import { callsFrom } from './signals/outgoing-waits.js';
import { IO_WAIT_MIN_LATENCY_MS, waitsInSequence } from './io-wait.js';
import { loopCaller, type LoopCaller } from './signals/loop-cause.js';
import { describePreemptedStall } from './signals/preempted-stall.js';
import { describePath, describePerRequest, pathWithCalls, type PathStep } from './signals/call-counts.js';
import {
  describeBytes,
  describeDominantWork,
  dominantWork,
  parsesRequestBodies,
  shortFile,
  type DominantWork,
} from './signals/dominant-work.js';

/** The loop must be busy at least half the time: delay on an idle loop is scheduling noise. */
export const BLOCKING_MIN_ELU = 0.5;
/** CPU per request that makes the loop the bottleneck: 1 ms caps a core at 1,000 req/s (a hello world costs ~0.05 ms). */
export const BLOCKING_CPU_PER_REQUEST_MS = 1;
/**
 * Event-loop delay p99 that counts as blocking on its own (ms), whatever the CPU per request
 * (a periodic job). High, because on a shared machine preemption alone puts 50-60 ms into the
 * p99 of a hello world; cheaper requests must show their cost in CPU per request instead.
 */
export const BLOCKING_ELD_P99_MS = 100;
/**
 * Cheaper requests still count when one app function does a large part of the work by its own
 * choice: at 0.3 ms a core caps at ~3,000 req/s (five times a hello world's cost), and a function
 * spending 30 % of the CPU on work it chose, not on answering the request (see focusedWork), is a
 * clear target (a backtracking regex, a hash, 256 KB of random bytes per request, a scratch buffer
 * allocated per request). Healthy handlers measured on Express, Koa, Fastify and restify chose at
 * most 3 % of their CPU: everything else was answering.
 */
export const BLOCKING_FOCUSED_CPU_PER_REQUEST_MS = 0.3;
export const BLOCKING_FOCUSED_SHARE = 0.3;
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
/** A single stall this long blocks every connection at once, whatever the utilization (ms). */
export const BLOCKING_STALL_MS = 500;
/** Critical above these: 10 ms per request (100 req/s per core), 100 ms delay p99, a 1 s stall. */
export const BLOCKING_CRITICAL_CPU_PER_REQUEST_MS = 10;
/**
 * Below this CPU per unit of loop activity the target was starved by other processes (load
 * average far above the cores): delay and stall figures then measure the machine, so only CPU
 * per request is trusted. A loop blocked by its own work runs at ~1.
 */
export const BLOCKING_STARVED_CPU_PER_ACTIVE = 0.6;
/**
 * Child processes the target started during the load and kept running, on average, from which
 * the CPU it missed is its own doing (the children took the cores, each spawn held the loop until
 * its child started): the delays then measure the app, not the machine.
 */
export const BLOCKING_OWN_CHILDREN_MIN = 0.5;
export const BLOCKING_CRITICAL_ELD_P99_MS = 100;
/**
 * The cost rules (CPU per request, focused work) also hold on a loop busy at least this share
 * when the requests did not wait in the server (server latency p50 below io-wait's 20 ms): its
 * idle time was then a wait for requests, which a lighter load or a busy machine leaves (beside
 * one spinning process per core, the generator delivered 790 req/s to a handler compiling rules
 * at 0.5 ms each, server p50 0.23 ms against the clients' 23 ms, and the loop read 47-65 % busy).
 * CPU per request and the focused share are what the rules rest on; the loop's utilization
 * measures the offered load.
 */
export const BLOCKING_FED_MIN_ELU = 0.25;

/** A loop busy at least BLOCKING_FED_MIN_ELU whose requests did not wait in the server: its idle time was a wait for requests. */
export function idleForWantOfRequests(s: LoopStats): boolean {
  return s.eluMean >= BLOCKING_FED_MIN_ELU && s.latencyP50Ms < IO_WAIT_MIN_LATENCY_MS;
}
export const BLOCKING_CRITICAL_STALL_MS = 1000;

export function eventLoopBlocking(run: RunData): Finding[] {
  const s = loopStats(run);
  if (!s) return [];
  const busy = s.eluMean >= BLOCKING_MIN_ELU;
  const waitingForRequests = idleForWantOfRequests(s);
  const view = cpuViewOf(run);
  const focus = focusedWork(view);
  // On a starved target the gate weighs the app's work against what its functions ran (see
  // unownedNativeUs); the culprit's share stays that of all the samples.
  const gateFocus = isStarved(s) ? focusedWork(view, true) : focus;
  const heavy =
    s.requests > 0 &&
    (s.cpuPerRequestMs >= BLOCKING_CPU_PER_REQUEST_MS ||
      (s.cpuPerRequestMs >= BLOCKING_FOCUSED_CPU_PER_REQUEST_MS && (gateFocus?.share ?? 0) >= BLOCKING_FOCUSED_SHARE) ||
      (gateFocus?.avoidable?.share ?? 0) >= BLOCKING_AVOIDABLE_SHARE);
  const trusted = !isStarved(s);
  const delayed = trusted && s.eldP99Ms >= BLOCKING_ELD_P99_MS;
  const stalled = trusted && s.stallMaxMs >= BLOCKING_STALL_MS;
  if (!((busy && (heavy || delayed)) || (waitingForRequests && heavy) || stalled)) return [];
  // Requests yielding per item keep the loop turning (loop-yields): what ran most between two yields is no culprit.
  if (!stalled && immediateYields(run)) return [];
  // The starved weighing names a culprit only in code the app wrote (a file of its own): a function
  // V8 compiled at run time for a library (a schema validator) is judged on all the samples, as before.
  const culpritFocus = gateFocus && gateFocus !== focus && gateFocus.fn.frame.file !== '' ? gateFocus : focus;
  return [finding(run, s, view, heavy, culpritFocus)];
}

/** The culprit's hottest line is told when it holds at least this share of its own samples. */
export const BLOCKING_HOT_LINE_SHARE = 0.25;

/** ...and when the function's own code (not its callees') is at least this share of its time. */
export const BLOCKING_HOT_LINE_OWN_SHARE = 0.5;

/**
 * The share of a function's attributed time spent in its own code (the samples its own frames
 * took, and with native stacks the V8 builtins and runtime it ran through: profile/engine-frames.ts).
 */
function ownCodeShare(view: CpuView, fn: FunctionCost): number {
  return fn.selfUs > 0 ? ownCodeWeight(view.tree, fn.frameIndex) / fn.selfUs : 0;
}

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
interface Focus {
  fn: FunctionCost;
  share: number;
  /** The app function with the most avoidable work (BLOCKING_AVOIDABLE_WORK) of its choosing, and that work's share. */
  avoidable?: { fn: FunctionCost; share: number };
}

function focusedWork(view: CpuView | undefined, starved = false): Focus | undefined {
  if (!view || view.activeUs <= 0) return undefined;
  const base = view.activeUs - (starved ? unownedNativeUs(view) : 0);
  if (base <= 0) return undefined;
  let best: Focus | undefined;
  let avoidable: Focus['avoidable'];
  for (const fn of appFunctions(view).slice(0, FOCUS_CANDIDATES)) {
    const group = ownGroup(view, fn);
    const chosenUs = group.reduce((a, f) => a + f.selfUs - view.pipelineOf(f.frameIndex), 0);
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
function ownGroup(view: CpuView, fn: FunctionCost): FunctionCost[] {
  const key = functionKey(fn.frame);
  return appFunctions(view).filter((f) => functionKey(f.frame) === key);
}

/**
 * Share of the culprit's time that must run from one kind of queued callback (process.nextTick,
 * a timer) for the finding to say so: then how it is scheduled is part of the fix.
 */
export const BLOCKING_ENTRY_SHARE = 0.5;

interface Scheduled {
  kind: 'nextTick' | 'timer';
  share: number;
  callback?: Frame;
}

/** How the culprit's work reached the loop, when that is a nextTick chain or a timer. */
function scheduledBy(view: CpuView, top: FunctionCost): Scheduled | undefined {
  const group = new Set(ownGroup(view, top).map((f) => f.frameIndex));
  group.add(top.frameIndex);
  const first = entryShares(view.tree, (frame) => group.has(frame))[0];
  if (!first || first.share < BLOCKING_ENTRY_SHARE || (first.kind !== 'nextTick' && first.kind !== 'timer')) return undefined;
  // A framework that runs the app's middleware through process.nextTick (restify) is no chain
  // the app drains: only app code seen calling process.nextTick makes it the app's.
  if (first.kind === 'nextTick' && !appCallsNextTick(view.tree)) return undefined;
  const callback = first.callbacks[0];
  return { kind: first.kind, share: first.share, ...(callback ? { callback: view.tree.frames[callback.frame] } : {}) };
}

/** Whether app code (not a dependency) was sampled calling process.nextTick. */
function appCallsNextTick(tree: CpuView['tree']): boolean {
  for (let i = 1; i < tree.frame.length; i++) {
    const f = tree.frames[tree.frame[i]];
    if (f.name !== 'nextTick' || f.file !== 'node:internal/process/task_queues') continue;
    for (let p = tree.parent[i]; p > 0; p = tree.parent[p]) {
      const kind = tree.frames[tree.frame[p]].kind;
      if (kind === 'app') return true;
      if (kind === 'deps') break;
    }
  }
  return false;
}

function describeScheduled(s: Scheduled, cwd: string): string {
  const pct = round(s.share * 100, 0);
  const where = s.callback ? `, most in ${describeCulprit(frameCulprit(s.callback, cwd))}` : '';
  return s.kind === 'nextTick'
    ? ` ${pct} % of it runs in process.nextTick callbacks${where}: Node runs all queued nextTick callbacks, and those they queue, before it returns to I/O.`
    : ` ${pct} % of it runs in timer callbacks${where}, not in request handlers: a background job holds the loop while requests wait.`;
}

/** The target got too little CPU for its loop's activity, and not because of child processes of its own. */
export function isStarved(s: LoopStats): boolean {
  return s.cpuPerActive < BLOCKING_STARVED_CPU_PER_ACTIVE && !ownChildren(s);
}

/** The target ran child processes of its own during the load (see BLOCKING_OWN_CHILDREN_MIN). */
export function ownChildren(s: LoopStats): boolean {
  return s.childProcessesMean >= BLOCKING_OWN_CHILDREN_MIN;
}

/** Why the loop's active time got less CPU than it asked for, when it did. */
function cpuShortfall(s: LoopStats): string {
  const pct = round(s.cpuPerActive * 100, 0);
  if (s.cpuPerActive >= BLOCKING_STARVED_CPU_PER_ACTIVE) return '';
  if (ownChildren(s)) {
    return (
      ` The target had the CPU ${pct} % of its loop's active time while ${round(s.childProcessesMean, 1)} child processes of its own ran on average: ` +
      "they share the cores with it and each spawn holds the loop until its child has started, so the delays are its own doing, not other processes'."
    );
  }
  return ` The machine was busy (the target had the CPU ${pct} % of its loop's active time), so delays are inflated; CPU per request is the reliable figure.`;
}

function isCritical(s: LoopStats): boolean {
  if (s.cpuPerRequestMs >= BLOCKING_CRITICAL_CPU_PER_REQUEST_MS) return true;
  return !isStarved(s) && (s.eldP99Ms >= BLOCKING_CRITICAL_ELD_P99_MS || s.stallMaxMs >= BLOCKING_CRITICAL_STALL_MS);
}

/**
 * A function must carry this share of the CPU to be named the culprit: below it the cost is
 * spread (or sits in code no app frame called, like a router walking its stack), and naming
 * the biggest small contributor would send the user to the wrong place.
 */
export const BLOCKING_CULPRIT_MIN_SHARE = 0.25;

/**
 * The user's function that chose the most work (see focusedWork), when that is enough to name;
 * else the one that asked for the most CPU, answering requests included (a handler writing
 * thousands of small chunks); a dependency's when no app code is on the stacks.
 */
function culpritOf(view: CpuView | undefined, focus: Focus | undefined): FunctionCost | undefined {
  if (!view) return undefined;
  if (focus && focus.share >= BLOCKING_CULPRIT_MIN_SHARE) return focus.fn;
  // Named only in a file the app wrote (as the starved weighing): code compiled at run time is a library's.
  if (focus?.avoidable && focus.avoidable.share >= BLOCKING_AVOIDABLE_SHARE && focus.avoidable.fn.frame.file !== '')
    return focus.avoidable.fn;
  const top = appFunctions(view)[0] ?? view.functions.find((f) => f.frame.kind === 'deps');
  return top && top.selfUs / view.activeUs >= BLOCKING_CULPRIT_MIN_SHARE ? top : undefined;
}

/** Without a culprit the finding explains at most what the hottest function does. */
function spreadShare(view: CpuView | undefined): number {
  return view ? (topFunctions(view)[0]?.selfShare ?? 0) : 0.5;
}

/** The hottest functions of any kind that carry code (not GC, idle, the unattributed program or hotpath's agent). */
function topFunctions(view: CpuView) {
  return view.functions
    .filter((f) => !['gc', 'idle', 'program', 'agent'].includes(f.frame.kind))
    .slice(0, 5)
    .map((f) => ({
      function: f.frame.name,
      file: f.frame.file,
      line: f.frame.line,
      kind: f.frame.kind,
      selfShare: round(f.selfUs / view.activeUs, 3),
    }));
}

/**
 * Without a culprit from the CPU profile, the function the stalls' own samples charge with at
 * least this share of the stalled time names the block (see signals/stall-causes.ts). A busy
 * machine does not void it: it stretches a stall, but the samples still show the code that held
 * the loop, and a stall that is only the machine's spreads its samples under that share.
 */
export const BLOCKING_STALL_CULPRIT_MIN_SHARE = 0.5;

function stallCulprit(run: RunData, s: LoopStats): StallCulprit | undefined {
  if (s.stallMaxMs < BLOCKING_STALL_MS) return undefined;
  const top = stallCulprits(run)[0];
  return top && top.share >= BLOCKING_STALL_CULPRIT_MIN_SHARE ? top : undefined;
}

/**
 * Stretches of time a function held the loop without a break count from this long (ms), and
 * from half the loop's delay p99 when that is longer: the blocks that make the delay.
 */
export const BLOCKING_STRETCH_MIN_MS = 20;

interface Holder {
  stretches: LongStretches;
  cost?: FunctionCost;
}

/**
 * When the requests are cheap and the loop is still delayed, the function that held it for long
 * stretches (a timer job, a periodic flush), not the one with the most CPU (the cheap handler
 * run 40,000 times a second).
 */
function longHolder(run: RunData, s: LoopStats, view: CpuView | undefined, heavy: boolean): Holder | undefined {
  if (!view || heavy) return undefined;
  const minUs = Math.max(BLOCKING_STRETCH_MIN_MS, s.eldP99Ms / 2) * 1000;
  const holder = longestHolder(longStretches(samplesOf(run, view), minUs));
  if (!holder) return undefined;
  const f = holder.frame;
  const at = view.functions.find((c) => c.frame.name === f.name && c.frame.file === f.file && c.frame.line === f.line);
  const cost = at ? mainWorkUnder(view, at) : undefined;
  return { stretches: holder, ...(cost ? { cost } : {}) };
}

/**
 * The app function doing most of the work under `fn` (itself included), when one does at least
 * half of it: a sampled stack may lose the callee V8 inlined into the job's callback, but the
 * tree, with inlined frames restored, still has it.
 */
function mainWorkUnder(view: CpuView, fn: FunctionCost): FunctionCost {
  const tree = view.tree;
  // fn is an app frame: what its subtree's nodes are charged to stays inside the subtree.
  const attributed = attributedSelf(tree);
  const self = new Map<number, number>();
  let total = 0;
  for (let i = 1; i < tree.frame.length; i++) {
    if (tree.frame[i] !== fn.frameIndex) continue;
    const end = i + tree.subtreeSize[i];
    for (let j = i; j < end; j++) {
      const frame = tree.frame[j];
      if (attributed[j] <= 0 || tree.frames[frame].kind !== 'app') continue;
      self.set(frame, (self.get(frame) ?? 0) + attributed[j]);
      total += attributed[j];
    }
    i = end - 1;
  }
  const [frame, us] = [...self].sort((a, b) => b[1] - a[1])[0] ?? [fn.frameIndex, 0];
  if (frame === fn.frameIndex || us < total / 2) return fn;
  return view.functions.find((c) => c.frameIndex === frame) ?? fn;
}

function describeHolder(held: Holder, cwd: string, totalUs: number, activeUs: number): string {
  const h = held.stretches;
  const inAll = totalUs > 0 ? `, ${round((h.totalUs / totalUs) * 100, 0)} % of the time` : '';
  const holder = frameCulprit(h.frame, cwd);
  const work =
    held.cost && functionKey(held.cost.frame) !== functionKey(h.frame) && activeUs > 0
      ? ` Most of that work is in ${describeCulprit(frameCulprit(held.cost.frame, cwd))}, ${round((held.cost.selfUs / activeUs) * 100, 0)} % of the CPU time.`
      : '';
  return (
    ` ${describeCulprit(holder)} held the loop for up to ${round(h.maxUs / 1000, 0)} ms at a time ` +
    `(${h.count} stretch${h.count === 1 ? '' : 'es'} without a break, ${round(h.totalUs / 1000, 0)} ms in all${inAll}).${work}`
  );
}

/**
 * When the culprit's CPU is mostly HTTP client work: the outgoing calls the agent saw it make,
 * per request, and whether each request waits for them one after another (io-wait's rule).
 */
function clientCalls(run: RunData, s: LoopStats, culprit: Culprit) {
  const calls = callsFrom(run, culprit);
  if (!calls || s.requests === 0 || calls.completed === 0) return undefined;
  const perRequest = calls.completed / s.requests;
  const perCallMs = calls.totalMs / calls.completed;
  const sequential = waitsInSequence(perRequest, perCallMs, s.latencyP50Ms);
  const text =
    ` It makes ${round(perRequest, 1)} ${calls.api === 'fetch' ? 'fetch' : 'HTTP'} calls to ${calls.origin} per request` +
    (sequential
      ? `, one after another (${round(perRequest * perCallMs, 0)} ms end to end against a latency p50 of ${round(s.latencyP50Ms, 0)} ms)`
      : '') +
    ": the client's work is paid on every call.";
  return { perRequest, perCallMs, sequential, text };
}

/** A callee carrying this share of the CPU beside its caller, the culprit, is named with it. */
export const BLOCKING_CALLEE_MIN_SHARE = 0.2;

/**
 * The app function the culprit calls (its first app frame below the culprit's nodes) that carries
 * the most attributed time, when that is at least BLOCKING_CALLEE_MIN_SHARE of the CPU: a price
 * list built by a loop and the formatter it calls per row, 49 % and 47 %.
 */
function mainCallee(view: CpuView, top: FunctionCost): { fn: FunctionCost; share: number } | undefined {
  const tree = view.tree;
  const group = new Set(ownGroup(view, top).map((f) => f.frameIndex));
  group.add(top.frameIndex);
  const byFrame = new Map<number, number>();
  const attributed = attributedSelf(tree);
  for (let i = 1; i < tree.frame.length; i++) {
    const f = tree.frame[i];
    if (tree.frames[f].kind !== 'app' || group.has(f)) continue;
    const caller = tree.parent[i] > 0 ? firstAppAncestor(tree, tree.parent[i]) : -1;
    if (caller < 0 || !group.has(tree.frame[caller])) continue;
    byFrame.set(f, (byFrame.get(f) ?? 0) + attributed[i]);
  }
  const [frame, us] = [...byFrame].sort((a, b) => b[1] - a[1])[0] ?? [];
  if (frame === undefined || us === undefined || view.activeUs <= 0 || us / view.activeUs < BLOCKING_CALLEE_MIN_SHARE) return undefined;
  const fn = view.functions.find((c) => c.frameIndex === frame);
  return fn ? { fn, share: us / view.activeUs } : undefined;
}

/**
 * Without an app function to blame, the work that dominates the CPU (a body parser's JSON.parse,
 * a schema's regexp), where it ran and what it costs per request; a hot regexp the app's source
 * writes in exactly one place makes that place the culprit.
 */
function unownedWork(run: RunData, s: LoopStats, d: DominantWork): { text: string; culprit?: Culprit } {
  const perRequest = s.requests > 0 ? `, ${round(s.cpuPerRequestMs * d.share, 1)} ms per request` : '';
  const noApp = d.unowned ? ', with no app function on the stack' : '';
  let text = ` ${round(d.share * 100, 0)} % of the CPU is ${describeDominantWork(d, run.cwd)}${noApp}${perRequest}.`;
  const sites = d.patternSites;
  if (sites.length === 1) text += ` The app writes that pattern at ${sites[0].file}:${sites[0].line}.`;
  else if (sites.length > 1)
    text += ` The app writes that pattern in several places: ${sites.map((c) => `${c.file}:${c.line}`).join(', ')}.`;
  else if (d.pattern !== undefined && d.unowned)
    text += " The app's own files do not write it: a dependency does, or it is built at run time.";
  if (parsesRequestBodies(d)) text += ` The requests sent carried ${describeBytes(d.requestBytes!)} each: this is the body parser's work.`;
  return { text, ...(sites.length === 1 ? { culprit: sites[0] } : {}) };
}

function finding(run: RunData, s: LoopStats, view: CpuView | undefined, heavy: boolean, focus: Focus | undefined): Finding {
  const held = longHolder(run, s, view, heavy);
  const top = held ? held.cost : culpritOf(view, focus);
  const stalledBy = top || held ? undefined : stallCulprit(run, s);
  const framed = held
    ? frameCulprit(held.cost?.frame ?? held.stretches.frame, run.cwd)
    : top
      ? frameCulprit(top.frame, run.cwd)
      : stalledBy
        ? siteCulprit(stalledBy.site, run.cwd)
        : undefined;
  const dominant = !framed && view ? dominantWork(run, view) : undefined;
  const unowned = dominant ? unownedWork(run, s, dominant) : undefined;
  const paidIn = framed ?? unowned?.culprit;
  // A helper called per item by a loop pays; the loop, doing per-item work of its own, causes.
  const loop = top && view && !held ? loopCaller(run, view, top) : undefined;
  const loopCulprit = loop ? atLine(frameCulprit(loop.caller, run.cwd), loop.loopLine) : undefined;
  // Calls per request along the path from the request's first app function down to the helper.
  const pathSteps = loop
    ? pathWithCalls(
        run,
        loop.path.map((f) => ({ ...f, function: frameCulprit(f, run.cwd).function })),
      )
    : undefined;
  // HTTP client calls awaited one after another from the loop: the loop serialises them (and its
  // calls are resumptions V8 cannot count: async helpers get no call counts).
  const serialClient =
    loop !== undefined &&
    top !== undefined &&
    view !== undefined &&
    paidIn !== undefined &&
    workSummary(view.workOf(top.frameIndex)).dominant === 'http-client' &&
    clientCalls(run, s, paidIn)?.sequential === true;
  const loopCauses = loop !== undefined && top !== undefined && (causedByLoop(loop, top, pathSteps) || serialClient);
  const culprit = loopCauses ? loopCulprit : paidIn;
  const share = top && view ? top.selfUs / view.activeUs : 0;
  const items = top && view ? view.workOf(top.frameIndex) : [];
  const work = workSummary(items);
  const workText = describeWork(items);
  const scheduled = top && view ? scheduledBy(view, top) : undefined;
  const scheduledText = scheduled ? describeScheduled(scheduled, run.cwd) : '';
  const perRequest = s.requests > 0 ? ` Each request costs ${round(s.cpuPerRequestMs, 2)} ms of CPU.` : '';
  // Ticks fall on lines only for a function's own code: its callees' work has no line in it.
  const hot =
    top && view && paidIn && ownCodeShare(view, top) >= BLOCKING_HOT_LINE_OWN_SHARE ? hotLine(view.tree, top.frameIndex) : undefined;
  const hotText =
    hot && paidIn && hot.share >= BLOCKING_HOT_LINE_SHARE && hot.line !== paidIn.line
      ? ` Its hottest line is ${paidIn.file}:${hot.line} (${round(hot.share * 100, 0)} % of its own samples).`
      : '';
  const calls = work.dominant === 'http-client' && paidIn ? clientCalls(run, s, paidIn) : undefined;
  // The helper the culprit hands much of its work to, when that is where the kind of work shows.
  const callee = top && view && !held && work.dominant === undefined ? mainCallee(view, top) : undefined;
  const calleeWork = callee && view ? workSummary(view.workOf(callee.fn.frameIndex)) : undefined;
  const calleeText =
    callee && view
      ? ` It calls ${describeCulprit(frameCulprit(callee.fn.frame, run.cwd))}, which carries ${round(callee.share * 100, 0)} % more${describeWork(view.workOf(callee.fn.frameIndex)) ? `, spent on ${describeWork(view.workOf(callee.fn.frameIndex))}` : ''}.`
      : '';
  const advised = calleeWork?.dominant !== undefined ? calleeWork : work;
  const who =
    culprit && held && view
      ? describeHolder(held, run.cwd, view.totalUs, view.activeUs) + scheduledText
      : paidIn && top
        ? ` ${describeCulprit(paidIn)} carries ${round(share * 100, 0)} % of the CPU time${workText ? `, spent on ${workText}` : ''}.${hotText}${calleeText}${calls?.text ?? ''}${scheduledText}`
        : culprit && stalledBy
          ? ` The stalls' own samples put ${round(stalledBy.share * 100, 0)} % of the stalled time (${round(stalledBy.blockedMs, 0)} ms) in ${describeCulprit(culprit)}.`
          : '';
  // With dominant work, its own sentence says where the CPU went (a dependency may carry more than 25 %).
  const spread =
    !framed && view && !dominant
      ? ` No ${appFunctions(view).length > 0 ? 'app' : 'single'} function carries ${round(BLOCKING_CULPRIT_MIN_SHARE * 100, 0)} % of the CPU; the hottest: ${topFunctions(
          view,
        )
          .slice(0, 3)
          .map((f) => `${f.function} (${f.file || f.kind}${f.line ? `:${f.line}` : ''}) ${round(f.selfShare * 100, 0)} %`)
          .join(', ')}.`
      : '';
  const stall = s.stallMaxMs >= BLOCKING_STALL_MS ? ` The loop stalled for ${round(s.stallMaxMs, 0)} ms at once.` : '';
  const starved = cpuShortfall(s) + describePreemptedStall(s, BLOCKING_STALL_MS);
  return {
    code: 'HOTPATH_EVENT_LOOP_BLOCKING',
    category: 'event-loop-blocking',
    severity: isCritical(s) ? 'critical' : 'warning',
    title: title(culprit, work.label, dominant),
    summary: `The event loop was busy ${round(s.eluMean * 100, 0)} % of the time with a delay p99 of ${round(s.eldP99Ms, 1)} ms.${perRequest}${who}${loop && loopCulprit && paidIn ? describeLoop(loop, loopCulprit, paidIn, pathSteps ?? []) : ''}${spread}${unowned?.text ?? ''}${stall}${starved}`,
    evidence: {
      eluMean: round(s.eluMean, 3),
      eldP99Ms: round(s.eldP99Ms, 2),
      eldMaxMs: round(s.eldMaxMs, 1),
      cpuPerRequestMs: round(s.cpuPerRequestMs, 3),
      requestsPerSecond: round(s.requestsPerSecond, 1),
      cpuPerActive: round(s.cpuPerActive, 2),
      ...(s.childProcessesMean > 0 ? { childProcesses: round(s.childProcessesMean, 1) } : {}),
      ...(s.stallCount > 0 ? { stalls: s.stallCount, stallMaxMs: round(s.stallMaxMs, 0) } : {}),
      ...(s.preemptedStalls > 0 ? { preemptedStalls: s.preemptedStalls, preemptedStallMaxMs: round(s.preemptedStallMaxMs, 0) } : {}),
      ...(top ? { culpritSelfShare: round(share, 3), culpritSelfMs: round(top.selfUs / 1000, 1) } : {}),
      ...(focus?.avoidable && focus.avoidable.share >= BLOCKING_AVOIDABLE_SHARE ? { avoidableShare: round(focus.avoidable.share, 3) } : {}),
      ...(hot ? { hotLine: hot.line, hotLineShare: round(hot.share, 3) } : {}),
      ...(held
        ? {
            culpritStretches: held.stretches.count,
            culpritStretchMaxMs: round(held.stretches.maxUs / 1000, 1),
            culpritStretchMs: round(held.stretches.totalUs / 1000, 0),
          }
        : {}),
      ...(stalledBy ? { culpritStalledMs: round(stalledBy.blockedMs, 0), culpritStalledShare: round(stalledBy.share, 3) } : {}),
      ...(work.dominant ? { work: work.dominant, workLabel: work.label } : {}),
      ...(dominant ? dominantEvidence(dominant, run.cwd) : {}),
      ...(items.length > 0 ? { workBreakdown: work.breakdown } : {}),
      ...(view ? { topFunctions: topFunctions(view) } : {}),
      ...(calls
        ? {
            callsPerRequest: round(calls.perRequest, 2),
            perCallMs: round(calls.perCallMs, 2),
            ...(calls.sequential ? { sequential: true } : {}),
          }
        : {}),
      ...(scheduled
        ? {
            scheduledBy: scheduled.kind,
            scheduledShare: round(scheduled.share, 3),
            ...(scheduled.callback ? { scheduledCallback: scheduled.callback.name } : {}),
          }
        : {}),
      ...(loop && loopCulprit
        ? {
            calledInLoop: loopCulprit,
            callPath: loop.path.map((f, i) => ({
              ...frameCulprit(f, run.cwd),
              ...(pathSteps?.[i]?.callsPerRequest !== undefined ? { callsPerRequest: pathSteps[i].callsPerRequest } : {}),
            })),
            ...(loopCauses && paidIn ? { paidIn } : {}),
            ...(helperCalls(pathSteps)
              ? {
                  helperCallsPerRequest: helperCalls(pathSteps)!.perRequest,
                  ...(helperCalls(pathSteps)!.perCallerCall !== undefined
                    ? { helperCallsPerCallerCall: helperCalls(pathSteps)!.perCallerCall }
                    : {}),
                }
              : {}),
          }
        : {}),
    },
    ...(culprit ? { culprit } : {}),
    recommendation: dominant
      ? blockingAdvice(dominant.work, dominant.label, undefined, false, {
          requestBodies: parsesRequestBodies(dominant),
          ...(dominant.pattern !== undefined ? { pattern: dominant.pattern } : {}),
        })
      : blockingAdvice(advised.dominant, advised.label, scheduled?.kind, calls?.sequential),
    impact: Math.min(
      1,
      Math.max(s.eluMean, s.stallMaxMs / s.durationMs) *
        (held && view
          ? held.stretches.totalUs / view.totalUs
          : top
            ? share
            : stalledBy
              ? stalledBy.share
              : dominant
                ? dominant.share
                : spreadShare(view)),
    ),
  };
}

/**
 * The loop is the cause when it does per-item work of its own beside the helper's, at least this
 * share of the two together: many iterations, each cheap (a listing ranker's loop at 12 % beside
 * the normalizer it calls for every listing). A loop of four heavy calls (a rule compiled per
 * rule) spends next to nothing of its own, and the helper's own work is the cause.
 */
export const BLOCKING_LOOP_OWN_MIN_SHARE = 0.08;
/**
 * With call counts (docs/agent.md, Call counts), the loop is the cause too when it calls the
 * helper at least this many times per call of its own, whatever its own share: a loop whose body
 * is only the call spends nothing of its own, yet makes thousands of calls per request (a count
 * the machine's speed does not change, unlike the shares of CPU time).
 */
export const BLOCKING_LOOP_MANY_CALLS = 100;

function causedByLoop(loop: LoopCaller, helper: FunctionCost, steps: readonly PathStep[] | undefined): boolean {
  const own = loop.callerCost?.selfUs ?? 0;
  if (own + helper.selfUs > 0 && own / (own + helper.selfUs) >= BLOCKING_LOOP_OWN_MIN_SHARE) return true;
  const calls = helperCalls(steps);
  return calls?.perCallerCall !== undefined && calls.perCallerCall >= BLOCKING_LOOP_MANY_CALLS;
}

/** The helper's calls per request (the path's last step) and per call of the caller holding the loop (the step above it). */
function helperCalls(steps: readonly PathStep[] | undefined): { perRequest: number; perCallerCall?: number } | undefined {
  const helper = steps?.at(-1);
  if (!steps || helper?.callsPerRequest === undefined) return undefined;
  const caller = steps.at(-2)?.calls;
  return {
    perRequest: helper.callsPerRequest,
    ...(caller !== undefined && caller > 0 && helper.calls !== undefined ? { perCallerCall: round(helper.calls / caller, 1) } : {}),
  };
}

/** A culprit at another line of its function (no column: the function's own would mislead). */
function atLine(c: Culprit, line: number): Culprit {
  const { column: _column, ...rest } = c;
  return { ...rest, line };
}

function describeLoop(loop: LoopCaller, at: Culprit, helper: Culprit, steps: readonly PathStep[]): string {
  const calls = helperCalls(steps);
  const counted = calls
    ? ` ${describePerRequest(calls.perRequest)} times per request${calls.perCallerCall !== undefined ? ` (${describePerRequest(calls.perCallerCall)} per call of ${at.function})` : ''}`
    : ' for every item';
  return (
    ` ${helper.function} is called${counted} by the loop at ${at.file}:${at.line} in ${at.function} (the call on line ${loop.callLine}): ` +
    `the cost is paid in ${helper.function}, and made by the loop that calls it per item on every request. Path: ${describePath(steps)}.`
  );
}

function title(culprit: Culprit | undefined, label: string | undefined, dominant: DominantWork | undefined): string {
  if (culprit) return `${culprit.function} blocks the event loop${(label ?? dominant?.label) ? ` (${label ?? dominant?.label})` : ''}`;
  if (!dominant) return 'Synchronous work blocks the event loop';
  if (dominant.work === 'deps') return `The ${dominant.label} package blocks the event loop`;
  const what = dominant.pattern !== undefined ? 'A regular expression' : dominant.label.charAt(0).toUpperCase() + dominant.label.slice(1);
  return `${what}${dominant.source?.package ? ` in ${dominant.source.package}` : ''} ${isPlural(what) ? 'block' : 'blocks'} the event loop`;
}

/**
 * Whether a work label reads as a plural subject: "Regular expressions", "Whole-file reads
 * (fs.promises.readFile)", "Buffer copies and allocation"; not "File system", "Hashing",
 * "Spawning child processes" (a gerund phrase is one activity).
 */
function isPlural(label: string): boolean {
  const head = label.replace(/\s*\(.*\)\s*$/, '');
  if (/^\w+ing\b/.test(head)) return false;
  return / and /.test(head) || /[^s]s$/.test(head);
}

/** The evidence of work no app function was blamed for (see signals/dominant-work.ts). */
function dominantEvidence(d: DominantWork, cwd: string): Record<string, unknown> {
  return {
    work: d.work,
    workLabel: d.label,
    workShare: round(d.share, 3),
    noAppCode: d.unowned,
    ...(d.source ? { workSource: `${shortFile(d.source.frame.file, cwd)}:${d.source.line}`, workFunction: d.source.frame.name } : {}),
    ...(d.source?.package ? { workPackage: d.source.package } : {}),
    ...(d.pattern !== undefined ? { pattern: d.pattern, patternSites: d.patternSites.map((c) => `${c.file}:${c.line}`) } : {}),
    ...(d.requestBytes !== undefined ? { requestBytes: Math.round(d.requestBytes) } : {}),
  };
}
