// Event-loop blocking: the loop is busy and each request (or a periodic job) holds it for a
// long synchronous stretch. Signals over the load window: utilization, delay, stalls and CPU
// per request. Culprit: the app function carrying the most attributed self time in the CPU
// profile, with the kind of work (regex, crypto, zlib, JSON...) it was doing; without one (no
// profile, or the cost spread), the app function the stalls' own samples blame; without any,
// the kind of work that dominates the CPU and where it ran (a body parser's JSON.parse, a schema's
// regexp, tied to the place the app's source writes its pattern), with that kind's advice.

import type { RunData } from '../run-dir/run-data.js';
import type { Culprit, Evidence, Finding } from './finding.js';
import { buildFinding } from './build-finding.js';
import { immediateYields } from './signals/immediate-yields.js';
import { loopStats, type LoopStats } from './signals/loop-stats.js';
import { appFunctions, cpuViewOf, type CpuView, type FunctionCost } from './signals/cpu-view.js';
import { describeCulprit, frameCulprit, siteCulprit } from './signals/culprit.js';
import { stallCulprits, type StallCulprit } from './signals/stall-causes.js';
import { attributedSelf, firstAppAncestor } from '../profile/attribution.js';
import { hotLine, type HotLine } from '../profile/hot-line.js';
import { ownCodeWeight } from '../profile/engine-frames.js';
import type { WorkItem } from '../profile/work-breakdown.js';
import { describeWork, isSpecificWork, workSummary } from './signals/culprit-work.js';
import { round } from './signals/stats.js';
import { blockingAdvice, routeTableAdvice } from './event-loop-blocking.advice.js';
import { callsFrom } from './signals/outgoing-waits.js';
import { IO_WAIT_MIN_LATENCY_MS, requestWaitsInSequence } from './io-wait.js';
import { offLoopCores } from './off-loop-cpu.js';
import { loopCaller, type LoopCaller } from './signals/loop-cause.js';
import { describePreemptedStall } from './signals/preempted-stall.js';
import { callCountShortfall, describePerRequest, pathWithCalls, type PathStep } from './signals/call-counts.js';
import { BLOCKING_AVOIDABLE_SHARE, focusedWork, ownGroup, type Focus } from './signals/focused-work.js';
import { describeScheduled, scheduledBy, type Scheduled } from './signals/scheduled-by.js';
import { describeHolder, longHolder, type Holder } from './signals/loop-holder.js';
import { LOOP_SIBLING_MIN_SHARE, atLine, causedByLoop, describeLoop, helperCalls } from './signals/loop-blame.js';
import {
  compileCause,
  compileCauseEvidence,
  compilePair,
  describeCompileCause,
  withCompiledWork,
  type CompileCause,
} from './signals/compile-cause.js';
import {
  describeBytes,
  describeDominantWork,
  dominantWork,
  startedInApp,
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

/**
 * A loop busy at least BLOCKING_FED_MIN_ELU whose requests did not wait in the server: its idle time
 * was a wait for requests. Under an open-model load (`--rate`) the offered rate is the user's, the
 * same on any machine, so the loop is as busy as its own CPU says: its ELU also counts the time it
 * waited for a core (probe round x, a healthy worker-pool route at `-R 150`, 0.47 ms of CPU a request,
 * beside two spinning processes: ELU 0.31 with the target on the CPU 19 % of its active time, 0.06
 * of a core, read as blocking; 0.08-0.10 on the quieter runs). A closed-model load keeps the ELU: its
 * rate is what the starved server answered, which free cores would raise.
 */
export function idleForWantOfRequests(s: LoopStats, run?: Pick<RunData, 'load'>): boolean {
  return loopBusyShare(s, run) >= BLOCKING_FED_MIN_ELU && s.latencyP50Ms < IO_WAIT_MIN_LATENCY_MS;
}

/** How busy the load kept the loop: its ELU, or under an open-model load the lesser of it and its CPU (see idleForWantOfRequests). */
export function loopBusyShare(s: LoopStats, run?: Pick<RunData, 'load'>): number {
  return run?.load?.model === 'open' ? Math.min(s.eluMean, s.coresMean) : s.eluMean;
}
export const BLOCKING_CRITICAL_STALL_MS = 1000;

export function eventLoopBlocking(run: RunData): Finding[] {
  const s = loopStats(run);
  if (!s) return [];
  const busy = loopBusyShare(s, run) >= BLOCKING_MIN_ELU;
  const waitingForRequests = idleForWantOfRequests(s, run);
  const view = cpuViewOf(run);
  const focus = focusedWork(view);
  // On a starved target the gate weighs the app's work against what its functions ran (see
  // unownedNativeUs); the culprit's share stays that of all the samples.
  const gateFocus = isStarved(s) ? focusedWork(view, true) : focus;
  const scale = cpuThresholdScale(s);
  const heavy =
    s.requests > 0 &&
    (s.cpuPerRequestMs >= BLOCKING_CPU_PER_REQUEST_MS * scale ||
      (s.cpuPerRequestMs >= BLOCKING_FOCUSED_CPU_PER_REQUEST_MS && (gateFocus?.share ?? 0) >= BLOCKING_FOCUSED_SHARE) ||
      (gateFocus?.avoidable?.share ?? 0) >= BLOCKING_AVOIDABLE_SHARE);
  // A compile paid at first use and caused by a builder elsewhere: the two places together (compile-cause.ts).
  const pair = !heavy && s.requests > 0 && view ? compilePair(run, view) : undefined;
  const paired = pair !== undefined && pair.share >= BLOCKING_AVOIDABLE_SHARE ? pair : undefined;
  const table = !heavy && !paired && s.requests > 0 && view ? routeTableWalk(run, s, view) : undefined;
  const trusted = !isStarved(s);
  const delayed = trusted && s.eldP99Ms >= BLOCKING_ELD_P99_MS;
  const stalled = trusted && s.stallMaxMs >= BLOCKING_STALL_MS;
  const costly = heavy || paired !== undefined || table !== undefined;
  const fedOffLoop = !busy && !waitingForRequests && costly && feedsOffLoopWork(run, s);
  if (!((busy && (costly || delayed)) || (waitingForRequests && costly) || fedOffLoop || stalled)) return [];
  // Requests yielding per item keep the loop turning (loop-yields): what ran most between two yields is no culprit.
  if (!stalled && immediateYields(run)) return [];
  // The starved weighing names a culprit only in code the app wrote (a file of its own): a function
  // V8 compiled at run time for a library (a schema validator) is judged on all the samples, as before.
  const culpritFocus = gateFocus && gateFocus !== focus && gateFocus.fn.frame.file !== '' ? gateFocus : focus;
  const f = finding(run, s, view, costly, culpritFocus, paired);
  // Fed by off-loop work alone, the loop is blocked only by the clone the workers pay back.
  if (fedOffLoop && !(busy || waitingForRequests || stalled) && f.evidence.work !== 'clone') return [];
  return [f];
}

/**
 * A loop busy at least BLOCKING_FED_MIN_ELU whose requests waited for CPU work off the loop
 * (off-loop-cpu's condition: the process's other cores busy and server latency p50 high): its
 * idle time was a wait for that work, not for requests. When the loop's own cost is the
 * structured clone of what it sends the workers (work `clone`), the workers deserialize the same
 * message, so the clone is the cost of both: a price book cloned per job to a single worker left
 * the loop 46-49 % busy at 6 ms of CPU per request, the worker saturated (2026-11-28, CI and a
 * quiet machine alike). Other work beside a saturated pool is the pool's finding (off-loop-cpu).
 */
function feedsOffLoopWork(run: RunData, s: LoopStats): boolean {
  return s.eluMean >= BLOCKING_FED_MIN_ELU && offLoopCores(run) !== undefined;
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
  return (
    ` The machine was busy (the target had the CPU ${pct} % of its loop's active time), so delays are inflated; CPU per request is the reliable figure` +
    ` (its thresholds were scaled by ${round(cpuThresholdScale(s), 2)} for the CPU the loop lost to other processes).`
  );
}

/**
 * A route table walked per request (dominant-work.ts, ROUTE_TABLE_MIN_PATTERNS) holding
 * BLOCKING_FOCUSED_SHARE of the CPU, at BLOCKING_FOCUSED_CPU_PER_REQUEST_MS or more a request:
 * judged on its share, as focused work is, since no app frame runs it. Its cost per request is
 * the machine's speed times the routes registered before the one hit: the scenario
 * tenant-route-table (5,000 tenant routes ahead of the status route) cost 0.91-0.92 ms a request
 * on a busy 2-core machine, under the 1 ms of cost alone, and read healthy with the loop 99 % busy.
 */
function routeTableWalk(run: RunData, s: LoopStats, view: CpuView): DominantWork | undefined {
  if (s.cpuPerRequestMs < BLOCKING_FOCUSED_CPU_PER_REQUEST_MS) return undefined;
  const d = dominantWork(run, view);
  return d?.routePatterns !== undefined && d.share >= BLOCKING_FOCUSED_SHARE ? d : undefined;
}

/**
 * The most the CPU-per-request thresholds are scaled by on a starved loop (see cpuThresholdScale),
 * reached when the loop ran under 7 % of its active time.
 */
export const BLOCKING_STARVED_MAX_SCALE = 3;

/**
 * What the CPU-per-request thresholds of cost alone (1 ms, 10 ms critical) are multiplied by: 1,
 * or on a starved loop the square root of BLOCKING_STARVED_CPU_PER_ACTIVE over the CPU it got per
 * unit of its activity (at most BLOCKING_STARVED_MAX_SCALE; 1 at the starvation line). A thread
 * taken off the cores over and over pays again for its caches and the scheduler's work on each
 * return, so the same requests cost it more CPU: the loop thread of a healthy Express route with
 * one fetch and one file read per request (probe healthy-e4-io) cost 0.65 ms per request when it
 * had the CPU 67-73 % of its active time and 0.80-1.23 ms at 17-43 % (a load average of 16-18),
 * about the square root of the CPU it lost (1.9 times at 27 %). The share the loop ran is measured
 * in the same run, on the same thread, as the cost it scales. The rules that rest on shares
 * (focused work from 0.3 ms, avoidable work) are not scaled: a starved handler compiling rules per
 * request (rule-compile beside a CPU hog, 0.5 ms per request, 0.18 ms on a quiet core) is found by
 * its share of the CPU.
 */
export function cpuThresholdScale(s: LoopStats): number {
  if (!isStarved(s) || s.cpuPerActive <= 0) return 1;
  return Math.min(BLOCKING_STARVED_MAX_SCALE, Math.sqrt(BLOCKING_STARVED_CPU_PER_ACTIVE / s.cpuPerActive));
}

function isCritical(s: LoopStats): boolean {
  if (s.cpuPerRequestMs >= BLOCKING_CRITICAL_CPU_PER_REQUEST_MS * cpuThresholdScale(s)) return true;
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
  const app = appFunctions(view)[0];
  // A handler whose time is answering the request is not named when more of the CPU ran with no
  // app frame on the stack at all (Express's router trying 6,000 routes per request: 63 % of the
  // CPU in its `match` and the route patterns, the handler 34 %, nearly all of it the response's
  // socket writes): that work, a dependency's function or its kind, is the diagnosis.
  const top = app && answering(view, app) && unownedUs(view) > app.selfUs ? dependencyTop(view) : (app ?? dependencyTop(view));
  return top && top.selfUs / view.activeUs >= BLOCKING_CULPRIT_MIN_SHARE ? top : undefined;
}

/** A function's attributed time less the cost of answering the request (see profile/response-pipeline.ts). */
function chosenUs(view: CpuView, fn: FunctionCost): number {
  return Math.max(0, fn.selfUs - view.pipelineOf(fn.frameIndex));
}

/** At least this share of a function's attributed time is answering the request (profile/response-pipeline.ts): it did little else. */
export const BLOCKING_ANSWERING_SHARE = 0.5;

/** The CPU time of code no app function was charged with (no app frame on the stack), GC and the agent left out. */
function unownedUs(view: CpuView): number {
  return view.functions.filter((f) => !UNOWNED_SKIPPED.has(f.frame.kind)).reduce((a, f) => a + f.selfUs, 0);
}
const UNOWNED_SKIPPED: ReadonlySet<string> = new Set(['app', 'gc', 'idle', 'program', 'agent']);

function answering(view: CpuView, fn: FunctionCost): boolean {
  return fn.selfUs > 0 && view.pipelineOf(fn.frameIndex) / fn.selfUs >= BLOCKING_ANSWERING_SHARE;
}

/**
 * With no function carrying BLOCKING_CULPRIT_MIN_SHARE on its own, the cost may be split between a
 * function, the closures written inside it and the helpers it calls (an HTML table built by a loop,
 * its `map` callback and an `escape` helper: 7 %, 12 % and 12 %, the rest of the CPU in the
 * framework's write of the body). The deepest app function whose time with its callees carries
 * that share, when its own code (with its closures) does at least BLOCKING_OWNER_MIN_OWN_SHARE
 * of the CPU itself: a thin dispatcher above the work is not named, the function that does it is.
 */
export const BLOCKING_OWNER_MIN_OWN_SHARE = 0.1;

function spreadOwner(view: CpuView): { fn: FunctionCost; share: number } | undefined {
  if (view.activeUs <= 0) return undefined;
  const owners = appFunctions(view).filter((f) => {
    if (f.totalUs / view.activeUs < BLOCKING_CULPRIT_MIN_SHARE) return false;
    // Answering the request (its socket writes, the framework's response path) is no work of its own.
    const own = ownGroup(view, f).reduce((a, g) => a + chosenUs(view, g), 0);
    return own / view.activeUs >= BLOCKING_OWNER_MIN_OWN_SHARE;
  });
  const deepest = owners.sort((a, b) => a.totalUs - b.totalUs)[0];
  if (!deepest) return undefined;
  // A closure of the function is named by the function it was written in (the group's outermost).
  const fn = ownGroup(view, deepest).reduce((a, g) => (g.totalUs > a.totalUs ? g : a), deepest);
  return { fn, share: Math.min(1, fn.totalUs / view.activeUs) };
}

/**
 * The dependency function with the most self time, unless one specific kind of work (a regexp,
 * JSON, hashing...) holds more of the CPU: then that work, and where it ran, is the diagnosis
 * (dominantWork). How V8 splits a regexp's time between its `RegExp:` frame and the function
 * that calls `.test()` varies (fastify's compiled validator held 19 % of a backtracking pattern's
 * samples on Node 20 beside a CPU hog, 41 % on Node 24, against 71 % and 49 % in the regexp).
 */
function dependencyTop(view: CpuView): FunctionCost | undefined {
  const dep = view.functions.find((f) => f.frame.kind === 'deps');
  const work = Math.max(0, ...[...view.work].filter(([k]) => isSpecificWork(k)).map(([, us]) => us));
  return dep && dep.selfUs >= work ? dep : undefined;
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
 * When the culprit's CPU is mostly HTTP client work: the outgoing calls the agent saw it make,
 * per request, and whether each request waits for them one after another (io-wait's rule).
 */
function clientCalls(run: RunData, s: LoopStats, culprit: Culprit) {
  const calls = callsFrom(run, culprit);
  if (!calls || s.requests === 0 || calls.completed === 0) return undefined;
  const perRequest = calls.completed / s.requests;
  const perCallMs = calls.totalMs / calls.completed;
  const sequential = requestWaitsInSequence(s, perRequest, perCallMs);
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
  else if (d.routePatterns !== undefined)
    text +=
      ` The profile caught ${d.routePatterns.toLocaleString('en-US')} different route patterns: the router tries every route registered before the one a request matches, in turn, so each request pays for the table.` +
      (d.routeSite
        ? ` Their paths are written at ${d.routeSite.file}:${d.routeSite.line}, in ${d.routeSite.function}: the table is built there.`
        : '');
  else if (d.pattern !== undefined && d.unowned)
    text += " The app's own files do not write it: a dependency does, or it is built at run time.";
  if (parsesRequestBodies(d)) text += ` The requests sent carried ${describeBytes(d.requestBytes!)} each: this is the body parser's work.`;
  const started = sites.length === 0 ? startedInApp(d) : undefined;
  if (started) {
    const at = { ...frameCulprit(started.frame, run.cwd), line: started.line };
    text += ` It starts in ${describeCulprit(at)}: each call begins there and goes on in Node's own code after an await, where no app frame is left on the stack.`;
    return { text, culprit: at };
  }
  if (d.routeSite) return { text, culprit: d.routeSite };
  return { text, ...(sites.length === 1 ? { culprit: sites[0] } : {}) };
}

/**
 * Who the finding blames: the function that held the loop for long stretches, else the one whose
 * CPU it weighs (top) or the stalls' samples name; without any, the work no app function owns;
 * and the loop that calls the paying function per item when the loop, not the helper, causes it.
 */
interface Blame {
  held?: Holder;
  top?: FunctionCost;
  stalledBy?: StallCulprit;
  /** The function the profile or the stalls' samples name. */
  framed?: Culprit;
  dominant?: DominantWork;
  unowned?: { text: string; culprit?: Culprit };
  /** Where the cost is paid: the framed function, or the place the app writes the hot pattern. */
  paidIn?: Culprit;
  loop?: LoopBlame;
  /** A regexp or function the payer uses, built anew per call elsewhere: the builder causes the compile. */
  compiled?: CompileCause;
  culprit?: Culprit;
  /** Set when top was named for its time with its callees (spreadOwner): that share of the CPU. */
  withCallees?: number;
}

interface LoopBlame {
  caller: LoopCaller;
  /** The loop's line in its function. */
  at: Culprit;
  /** Calls per request along the path from the request's first app function down to the helper. */
  steps: PathStep[];
  causes: boolean;
  /** The loop's other heavy helpers (LOOP_SIBLING_MIN_SHARE), with their calls per call of the loop's function. */
  siblings: { fn: Culprit; perCallerCall: number }[];
}

function blameOf(
  run: RunData,
  s: LoopStats,
  view: CpuView | undefined,
  heavy: boolean,
  focus: Focus | undefined,
  paired?: { payer: FunctionCost; cause: CompileCause },
): Blame {
  const held = heavy ? undefined : longHolder(run, s, view);
  // A compile split between its builder and its first use is weighed as one: the payer is the function to start from.
  const weighed = held ? held.cost : (paired?.payer ?? culpritOf(view, focus));
  const stalledBy = weighed || held ? undefined : stallCulprit(run, s);
  const owner = weighed || held || stalledBy || !view ? undefined : spreadOwner(view);
  const top = weighed ?? owner?.fn;
  const framed = framedCulprit(run.cwd, held, top, stalledBy);
  const dominant = !framed && view ? dominantWork(run, view) : undefined;
  const unowned = dominant ? unownedWork(run, s, dominant) : undefined;
  const paidIn = framed ?? unowned?.culprit;
  // A helper called per item by a loop pays; the loop, doing per-item work of its own, causes.
  const loop = top && view && !held ? loopBlame(run, s, view, top, paidIn) : undefined;
  // A pattern or function compiled at its first use, built anew per call by another function: that builder causes it.
  const compiled = top && view && !held && !loop ? (paired?.payer === top ? paired.cause : compileCause(run, view, top)) : undefined;
  const culprit = loop?.causes ? loop.at : (compiled?.builder ?? paidIn);
  return {
    held,
    top,
    stalledBy,
    framed,
    dominant,
    unowned,
    paidIn,
    loop,
    ...(compiled ? { compiled } : {}),
    culprit,
    ...(owner ? { withCallees: owner.share } : {}),
  };
}

function framedCulprit(
  cwd: string,
  held: Holder | undefined,
  top: FunctionCost | undefined,
  stalledBy: StallCulprit | undefined,
): Culprit | undefined {
  if (held) return frameCulprit(held.cost?.frame ?? held.stretches.frame, cwd);
  if (top) return frameCulprit(top.frame, cwd);
  return stalledBy ? siteCulprit(stalledBy.site, cwd) : undefined;
}

function loopBlame(run: RunData, s: LoopStats, view: CpuView, top: FunctionCost, paidIn: Culprit | undefined): LoopBlame | undefined {
  const caller = loopCaller(run, view, top);
  if (!caller) return undefined;
  const steps = loopSteps(run, caller);
  // HTTP client calls awaited one after another from the loop: the loop serialises them (and its
  // calls are resumptions V8 cannot count: async helpers get no call counts).
  const serialClient =
    paidIn !== undefined &&
    workSummary(view.workOf(top.frameIndex)).dominant === 'http-client' &&
    clientCalls(run, s, paidIn)?.sequential === true;
  const at = atLine(frameCulprit(caller.caller, run.cwd), caller.loopLine);
  const siblings = siblingHelpers(run, view, top, caller);
  const siblingCalls = siblings.reduce((a, x) => a + x.perCallerCall, 0);
  return { caller, at, steps, siblings, causes: causedByLoop(caller, top, steps, siblingCalls) || serialClient };
}

/** Calls per request along a loop's path, from the request's first app function down to the helper. */
function loopSteps(run: RunData, loop: LoopCaller): PathStep[] {
  return pathWithCalls(
    run,
    loop.path.map((f) => ({ ...f, function: frameCulprit(f, run.cwd).function })),
  );
}

/** The same loop's other heavy helpers (LOOP_SIBLING_MIN_SHARE) and their calls per call of the loop's function. */
function siblingHelpers(run: RunData, view: CpuView, top: FunctionCost, loop: LoopCaller): LoopBlame['siblings'] {
  const same = (a: LoopCaller) =>
    a.caller.file === loop.caller.file &&
    a.caller.line === loop.caller.line &&
    a.caller.name === loop.caller.name &&
    a.loopLine === loop.loopLine;
  const out: LoopBlame['siblings'] = [];
  for (const f of view.functions) {
    if (f.selfUs < LOOP_SIBLING_MIN_SHARE * top.selfUs) break;
    if (f === top || f.frame.kind !== 'app') continue;
    const other = loopCaller(run, view, f);
    if (!other || !same(other)) continue;
    const perCallerCall = helperCalls(loopSteps(run, other))?.perCallerCall;
    if (perCallerCall !== undefined) out.push({ fn: frameCulprit(f.frame, run.cwd), perCallerCall });
  }
  return out;
}

/** What the weighed function (top) spends its CPU on, how it is scheduled, its hottest line, its calls and its main callee. */
interface TopWork {
  share: number;
  items: WorkItem[];
  work: ReturnType<typeof workSummary>;
  scheduled?: Scheduled;
  hot?: HotLine;
  calls?: ReturnType<typeof clientCalls>;
  callee?: { fn: FunctionCost; share: number };
  /** The work the advice is about: the callee's when the kind of work shows there. */
  advised: ReturnType<typeof workSummary>;
}

function topWorkOf(run: RunData, s: LoopStats, view: CpuView | undefined, b: Blame): TopWork {
  const { top, paidIn } = b;
  const items = top && view ? view.workOf(top.frameIndex) : [];
  const work = withCompiledWork(workSummary(items), b.compiled);
  // Ticks fall on lines only for a function's own code: its callees' work has no line in it.
  const hot =
    top && view && paidIn && ownCodeShare(view, top) >= BLOCKING_HOT_LINE_OWN_SHARE ? hotLine(view.tree, top.frameIndex) : undefined;
  // The helper the culprit hands much of its work to, when that is where the kind of work shows.
  const callee = top && view && !b.held && work.dominant === undefined ? mainCallee(view, top) : undefined;
  const calleeWork = callee && view ? workSummary(view.workOf(callee.fn.frameIndex)) : undefined;
  return {
    share: top && view ? top.selfUs / view.activeUs : 0,
    items,
    work,
    scheduled: top && view ? scheduledBy(view, top) : undefined,
    hot,
    calls: work.dominant === 'http-client' && paidIn ? clientCalls(run, s, paidIn) : undefined,
    callee,
    advised: calleeWork?.dominant !== undefined ? calleeWork : work,
  };
}

function finding(
  run: RunData,
  s: LoopStats,
  view: CpuView | undefined,
  heavy: boolean,
  focus: Focus | undefined,
  paired?: { payer: FunctionCost; cause: CompileCause },
): Finding {
  const b = blameOf(run, s, view, heavy, focus, paired);
  const t = topWorkOf(run, s, view, b);
  return buildFinding({
    code: 'HOTPATH_EVENT_LOOP_BLOCKING',
    category: 'event-loop-blocking',
    severity: isCritical(s) ? 'critical' : 'warning',
    title: title(b.culprit, t.work.label, b.dominant),
    summary: summaryOf(run, s, view, b, t),
    evidence: evidenceOf(run, s, view, focus, b, t),
    culprit: b.culprit,
    recommendation: recommendationOf(b.dominant, t),
    impact: Math.min(1, Math.max(s.eluMean, s.stallMaxMs / s.durationMs) * blamedShare(view, b, t.share)),
  });
}

function summaryOf(run: RunData, s: LoopStats, view: CpuView | undefined, b: Blame, t: TopWork): string {
  const perRequest = s.requests > 0 ? ` Each request costs ${round(s.cpuPerRequestMs, 2)} ms of CPU.` : '';
  const loop =
    b.loop && b.paidIn
      ? describeLoop(b.loop.caller, b.loop.at, b.paidIn, b.loop.steps) +
        (b.loop.causes && b.loop.siblings.length > 0
          ? ` The same loop also calls ${b.loop.siblings
              .map((x) => `${describeCulprit(x.fn)} ${describePerRequest(x.perCallerCall)} times per call of ${b.loop!.at.function}`)
              .join(' and ')}: its calls to them all are what each request pays for.`
          : '')
      : b.compiled
        ? describeCompileCause(b.compiled)
        : '';
  // With dominant work, its own sentence says where the CPU went (a dependency may carry more than 25 %).
  const spread = !b.framed && view && !b.dominant ? describeSpread(view) : '';
  const stall = s.stallMaxMs >= BLOCKING_STALL_MS ? ` The loop stalled for ${round(s.stallMaxMs, 0)} ms at once.` : '';
  const starved = cpuShortfall(s) + describePreemptedStall(s, BLOCKING_STALL_MS);
  return (
    `The event loop was busy ${round(s.eluMean * 100, 0)} % of the time with a delay p99 of ${round(s.eldP99Ms, 1)} ms.` +
    `${perRequest}${describeBlamed(run, view, b, t)}${loop}${spread}${b.unowned?.text ?? ''}${stall}${starved}`
  );
}

/** The sentences naming who holds the loop: the long holder, the function that pays, or the stalls' culprit. */
function describeBlamed(run: RunData, view: CpuView | undefined, b: Blame, t: TopWork): string {
  const scheduled = t.scheduled ? describeScheduled(t.scheduled, run.cwd) : '';
  if (b.culprit && b.held && view) return describeHolder(b.held, run.cwd, view.totalUs, view.activeUs) + scheduled;
  if (b.paidIn && b.top) {
    const workText = describeWork(t.items);
    const carries =
      b.withCallees !== undefined
        ? `${round(b.withCallees * 100, 0)} % of the CPU time with the functions it calls (${round(t.share * 100, 0)} % in its own code; no function carries ${round(BLOCKING_CULPRIT_MIN_SHARE * 100, 0)} % alone)`
        : `${round(t.share * 100, 0)} % of the CPU time`;
    return (
      ` ${describeCulprit(b.paidIn)} carries ${carries}${workText ? `, spent on ${workText}` : ''}.` +
      `${describeHotLine(t.hot, b.paidIn)}${describeCallee(run, view, t.callee)}${t.calls?.text ?? ''}${scheduled}`
    );
  }
  if (b.culprit && b.stalledBy) {
    const { share, blockedMs } = b.stalledBy;
    return ` The stalls' own samples put ${round(share * 100, 0)} % of the stalled time (${round(blockedMs, 0)} ms) in ${describeCulprit(b.culprit)}.`;
  }
  return '';
}

function describeHotLine(hot: HotLine | undefined, paidIn: Culprit): string {
  if (!hot || hot.share < BLOCKING_HOT_LINE_SHARE || hot.line === paidIn.line) return '';
  return ` Its hottest line is ${paidIn.file}:${hot.line} (${round(hot.share * 100, 0)} % of its own samples).`;
}

function describeCallee(run: RunData, view: CpuView | undefined, callee: TopWork['callee']): string {
  if (!callee || !view) return '';
  const workText = describeWork(view.workOf(callee.fn.frameIndex));
  return ` It calls ${describeCulprit(frameCulprit(callee.fn.frame, run.cwd))}, which carries ${round(callee.share * 100, 0)} % more${workText ? `, spent on ${workText}` : ''}.`;
}

/** No function carries enough to blame: the hottest few. */
function describeSpread(view: CpuView): string {
  const hottest = topFunctions(view)
    .slice(0, 3)
    .map((f) => `${f.function} (${f.file || f.kind}${f.line ? `:${f.line}` : ''}) ${round(f.selfShare * 100, 0)} %`)
    .join(', ');
  const who = appFunctions(view).length > 0 ? 'app' : 'single';
  return ` No ${who} function carries ${round(BLOCKING_CULPRIT_MIN_SHARE * 100, 0)} % of the CPU; the hottest: ${hottest}.`;
}

function evidenceOf(run: RunData, s: LoopStats, view: CpuView | undefined, focus: Focus | undefined, b: Blame, t: TopWork): Evidence {
  const { held, top, stalledBy, dominant } = b;
  const { hot, work, calls, scheduled } = t;
  return {
    ...loopEvidence(s),
    ...(cpuThresholdScale(s) > 1 ? { cpuThresholdScale: round(cpuThresholdScale(s), 3) } : {}),
    ...(top ? { culpritSelfShare: round(t.share, 3), culpritSelfMs: round(top.selfUs / 1000, 1) } : {}),
    ...(b.withCallees !== undefined ? { culpritWithCalleesShare: round(b.withCallees, 3) } : {}),
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
    ...(t.items.length > 0 ? { workBreakdown: work.breakdown } : {}),
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
    ...(b.loop ? loopBlameEvidence(run, b.loop, b.paidIn) : {}),
    ...(b.compiled && !b.loop ? compileCauseEvidence(b.compiled) : {}),
  };
}

/** The loop's own figures over the load window. */
function loopEvidence(s: LoopStats): Evidence {
  return {
    eluMean: round(s.eluMean, 3),
    eldP99Ms: round(s.eldP99Ms, 2),
    eldMaxMs: round(s.eldMaxMs, 1),
    cpuPerRequestMs: round(s.cpuPerRequestMs, 3),
    requestsPerSecond: round(s.requestsPerSecond, 1),
    cpuPerActive: round(s.cpuPerActive, 2),
    ...(s.childProcessesMean > 0 ? { childProcesses: round(s.childProcessesMean, 1) } : {}),
    ...(s.stallCount > 0 ? { stalls: s.stallCount, stallMaxMs: round(s.stallMaxMs, 0) } : {}),
    ...(s.preemptedStalls > 0 ? { preemptedStalls: s.preemptedStalls, preemptedStallMaxMs: round(s.preemptedStallMaxMs, 0) } : {}),
  };
}

/** The loop that calls the paying helper: where it is, the call path with its calls per request, and where the cost is paid. */
function loopBlameEvidence(run: RunData, loop: LoopBlame, paidIn: Culprit | undefined): Evidence {
  const cwd = run.cwd;
  const calls = helperCalls(loop.steps);
  return {
    calledInLoop: loop.at,
    callPath: loop.caller.path.map((f, i) => ({
      ...frameCulprit(f, cwd),
      ...(loop.steps[i]?.callsPerRequest !== undefined ? { callsPerRequest: loop.steps[i].callsPerRequest } : {}),
    })),
    ...(loop.causes && paidIn ? { paidIn } : {}),
    ...(calls?.perRequest !== undefined ? { helperCallsPerRequest: calls.perRequest } : callCountsMissing(run)),
    ...(calls?.perCallerCall !== undefined ? { helperCallsPerCallerCall: calls.perCallerCall } : {}),
    ...(loop.causes && loop.siblings.length > 0
      ? { loopAlsoCalls: loop.siblings.map((x) => ({ ...x.fn, callsPerCallerCall: x.perCallerCall })) }
      : {}),
  };
}

/** Why the loop's path has no calls per request, when the run counted calls and the window fell short. */
function callCountsMissing(run: RunData): Evidence {
  const shortfall = callCountShortfall(run);
  return shortfall !== undefined ? { callCounts: shortfall } : {};
}

function recommendationOf(dominant: DominantWork | undefined, t: TopWork): string {
  if (dominant?.routePatterns !== undefined) return routeTableAdvice;
  if (dominant) {
    return blockingAdvice(dominant.work, dominant.label, undefined, false, {
      requestBodies: parsesRequestBodies(dominant),
      ...(dominant.pattern !== undefined ? { pattern: dominant.pattern } : {}),
    });
  }
  return blockingAdvice(t.advised.dominant, t.advised.label, t.scheduled?.kind, t.calls?.sequential);
}

/** The share of the loop's busy time the blamed function (or work) explains. */
function blamedShare(view: CpuView | undefined, b: Blame, topShare: number): number {
  if (b.held && view) return b.held.stretches.totalUs / view.totalUs;
  if (b.top) return b.withCallees ?? topShare;
  if (b.stalledBy) return b.stalledBy.share;
  return b.dominant ? b.dominant.share : spreadShare(view);
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
    ...(d.routePatterns !== undefined ? { routePatterns: d.routePatterns } : {}),
    ...(d.routeSite ? { routeSite: `${d.routeSite.file}:${d.routeSite.line}` } : {}),
  };
}
