// Allocation sites from the sampling heap profile (`--heap`): bytes sampled per function,
// with allocations made inside dependencies, Node core or builtins charged to the nearest
// app frame above them (src/profile/build-heap-tree.ts), so the site named is the user's code.

import { readdirSync } from 'node:fs';
import { runFilePath } from '../../run-dir/run-dir-path.js';
import type { RunData } from '../../run-dir/run-data.js';
import type { CallTree, Frame } from '../../profile/call-tree.js';
import { runHeapProfile } from '../../profile/run-heap-profile.js';
import { buildHeapTree, topAllocators } from '../../profile/build-heap-tree.js';
import { appOwners } from '../../profile/attribution.js';
import { appLibraries, frameworkPackages, libraryCaller } from '../../profile/app-libraries.js';
import { dependencyName } from '../../profile/work-kind.js';
import { pipelineTime } from '../../profile/response-pipeline.js';
import { cpuViewOf } from './cpu-view.js';
import { runResolver } from '../../profile/run-source-maps.js';
import { perRun } from '../../run-dir/per-run.js';

export interface AllocationSite {
  frame: Frame;
  bytes: number;
  /** Share of all sampled bytes. */
  share: number;
}

export interface AllocationView {
  totalBytes: number;
  /** App sites by sampled bytes, largest first. */
  sites: AllocationSite[];
  /**
   * The site to name as the allocator: the top site, or a callee of it that allocates almost as
   * much (see INLINED_CALLEE_MIN_RATIO).
   */
  culprit?: AllocationSite;
  /**
   * Share of the sampled bytes the app's own code chose to allocate: made under an app frame and
   * not in the response pipeline (profile/response-pipeline.ts: Node's HTTP and the framework
   * answering the request, res.json → send → etag). The rest is the server stack's cost of
   * serving a request: bytes with no app frame on the stack (the HTTP parser, the router before
   * any handler) and the framework's response path under the handler.
   */
  appChosenShare: number;
  /**
   * The part of appChosenShare allocated with no app frame on the stack by libraries the app calls
   * (profile/app-libraries.ts), in callbacks of their own: a logger formatting each entry when its
   * file stream drains. Largest first, with the app function that calls each most.
   */
  libraries: LibraryBytes[];
}

/** Bytes a library the app calls allocated in its own callbacks (see AllocationView.libraries). */
export interface LibraryBytes {
  name: string;
  /** Share of all sampled bytes. */
  share: number;
  /** The app function seen calling it with the most bytes under the call. */
  caller?: Frame;
}

/**
 * V8's sampling heap profiler does not expand inlined frames: once a callee is inlined, its
 * allocations are charged to its caller's own bytes, while earlier (not yet optimized) calls are
 * charged to the callee, and the longer the run the more the caller seems to allocate. The CPU
 * profiler does expand inlined frames. So a site's direct callee is named instead when it
 * allocates at least INLINED_CALLEE_MIN_RATIO of the site's bytes and, in the CPU profile,
 * spends at least INLINED_CALLEE_MIN_CPU_RATIO of the site's self time (a real share of the
 * work is in the callee). Without a CPU profile the callee must allocate
 * INLINED_CALLEE_MIN_RATIO_NO_CPU of the site's bytes.
 */
export const INLINED_CALLEE_MIN_RATIO = 0.2;
export const INLINED_CALLEE_MIN_CPU_RATIO = 0.5;
export const INLINED_CALLEE_MIN_RATIO_NO_CPU = 0.5;

export const allocationsOf: (run: RunData) => AllocationView | undefined = perRun((run) => load(run) ?? undefined);

/**
 * Heap profiles listed for the run; else any heap-*.heapprofile file in the run directory
 * (the agent may finish writing it after the run stopped listening for its announcement).
 */
function heapPaths(run: RunData): string[] {
  const listed = run.profiles.filter((p) => p.kind === 'heap' && !p.unusable).map((p) => p.path);
  if (listed.length > 0) return listed;
  try {
    // Only files that stay inside the directory (a link out of it is no profile of this run).
    return readdirSync(run.dir)
      .filter((f) => /^heap-\d.*\.heapprofile$/.test(f))
      .flatMap((f) => {
        try {
          return [runFilePath(run.dir, f)];
        } catch {
          return [];
        }
      });
  } catch {
    return [];
  }
}

function load(run: RunData): AllocationView | null {
  const refs = heapPaths(run).map((path) => ({ path }));
  let best: AllocationView | null = null;
  for (const ref of refs) {
    try {
      const tree = buildHeapTree(runHeapProfile(run, ref), {
        cwd: run.cwd,
        resolver: runResolver(run),
      });
      if (tree.totalUs <= 0 || (best && best.totalBytes >= tree.totalUs)) continue;
      const top = topAllocators(tree, { limit: 20 });
      const sites = top.map((a) => ({ frame: tree.frames[a.frame], bytes: a.bytes, share: a.share }));
      const chosen = culpritIndex(
        tree,
        top.map((a) => a.frame),
        sites,
        cpuSelfOf(run),
      );
      const libraries = libraryBytes(tree, cpuViewOf(run)?.tree);
      best = {
        totalBytes: tree.totalUs,
        sites,
        ...(chosen === undefined ? {} : { culprit: sites[chosen] }),
        appChosenShare: appChosenBytes(tree) / tree.totalUs + libraries.reduce((a, l) => a + l.share, 0),
        libraries,
      };
    } catch {
      continue;
    }
  }
  return best;
}

/** Index into `sites` of the allocator to name: follow callees that hold the work (inlining). */
function culpritIndex(
  tree: CallTree,
  frames: number[],
  sites: AllocationSite[],
  cpuSelf: ((f: Frame) => number) | undefined,
): number | undefined {
  const app = sites.map((s, i) => (s.frame.kind === 'app' ? i : -1)).filter((i) => i >= 0);
  if (app.length === 0) return undefined;
  const callees = new Map<number, Set<number>>();
  for (let n = 1; n < tree.parent.length; n++) {
    const p = tree.parent[n];
    if (p <= 0) continue;
    const set = callees.get(tree.frame[p]) ?? new Set<number>();
    set.add(tree.frame[n]);
    callees.set(tree.frame[p], set);
  }
  const holdsWork = (callee: number, caller: number): boolean =>
    cpuSelf
      ? sites[callee].bytes >= INLINED_CALLEE_MIN_RATIO * sites[caller].bytes &&
        cpuSelf(sites[callee].frame) >= INLINED_CALLEE_MIN_CPU_RATIO * cpuSelf(sites[caller].frame)
      : sites[callee].bytes >= INLINED_CALLEE_MIN_RATIO_NO_CPU * sites[caller].bytes;
  let at = app[0];
  for (const seen = new Set([at]); ;) {
    const next = app.find((i) => !seen.has(i) && callees.get(frames[at])?.has(frames[i]) && holdsWork(i, at));
    if (next === undefined) return at;
    seen.add(next);
    at = next;
  }
}

/** Attributed CPU self time of a function (matched by name, file and line), when the run has a CPU profile. */
function cpuSelfOf(run: RunData): ((f: Frame) => number) | undefined {
  const view = cpuViewOf(run);
  if (!view) return undefined;
  return (f) => view.functions.find((c) => c.frame.name === f.name && c.frame.file === f.file && c.frame.line === f.line)?.selfUs ?? 0;
}

/** Sampled bytes allocated under an app frame, less those of the response pipeline (see AllocationView.appChosenShare). */
function appChosenBytes(tree: CallTree): number {
  const owner = appOwners(tree);
  let underApp = 0;
  for (let i = 1; i < tree.frame.length; i++) if (owner[i] >= 0) underApp += tree.self[i];
  const pipeline = pipelineTime(tree, owner).reduce((a, b) => a + b, 0);
  return Math.max(0, underApp - pipeline);
}

/**
 * Bytes allocated with no app frame on the stack under a frame of a library the app calls: its
 * own deferred work (a winston logger formats and writes each entry when its file stream drains,
 * from node's fs callback: 30 % of the window in GC with 1 % of the bytes under an app frame, read
 * as the server stack's cost, probe round z). The framework (its packages call the app) keeps the
 * bytes it allocates before or after the handler. Each library is charged by its outermost frame.
 * Which packages the app calls is read from the CPU profile too: the heap profile holds only the
 * stacks that allocated, and a logger's `info` called from the app may allocate too little to be
 * sampled there (one run of four beside two spinners read 0 % of the bytes as the app's without it).
 * The caller named is the CPU profile's first: the heap profile does not expand inlined frames
 * (a `logRequest` inlined into its route handler was charged to the handler in two runs of four).
 */
function libraryBytes(tree: CallTree, cpu?: CallTree): LibraryBytes[] {
  const libs = new Set([...appLibraries(tree), ...(cpu ? appLibraries(cpu) : [])]);
  const framework = new Set([...frameworkPackages(tree), ...(cpu ? frameworkPackages(cpu) : [])]);
  for (const pkg of framework) libs.delete(pkg);
  if (libs.size === 0) return [];
  const owner = appOwners(tree);
  const n = tree.frame.length;
  // Per node, the outermost library frame above it (or itself) when no app frame is: -1 otherwise.
  const lib = new Int32Array(n).fill(-1);
  const viaFramework = new Uint8Array(n);
  const bytes = new Map<string, number>();
  for (let i = 1; i < n; i++) {
    if (owner[i] >= 0) continue;
    const p = tree.parent[i];
    const fr = tree.frames[tree.frame[i]];
    const pkg = fr.kind === 'deps' ? dependencyName(fr.file) : undefined;
    // Under a framework frame the library works for the framework (express parsing a query with qs).
    viaFramework[i] = (p > 0 && viaFramework[p] === 1) || (pkg !== undefined && framework.has(pkg)) ? 1 : 0;
    lib[i] = p > 0 && lib[p] >= 0 ? lib[p] : pkg !== undefined && libs.has(pkg) && viaFramework[i] === 0 ? i : -1;
    if (lib[i] >= 0 && tree.self[i] > 0) {
      const name = dependencyName(tree.frames[tree.frame[lib[i]]].file);
      bytes.set(name, (bytes.get(name) ?? 0) + tree.self[i]);
    }
  }
  return [...bytes]
    .map(([name, b]) => {
      const fromCpu = cpu ? libraryCaller(cpu, name) : undefined;
      const fromHeap = libraryCaller(tree, name);
      const caller = cpu && fromCpu !== undefined ? cpu.frames[fromCpu] : fromHeap !== undefined ? tree.frames[fromHeap] : undefined;
      return { name, share: tree.totalUs > 0 ? b / tree.totalUs : 0, ...(caller ? { caller } : {}) };
    })
    .sort((a, b) => b.share - a.share);
}
