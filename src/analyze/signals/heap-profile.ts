// Allocation sites from the sampling heap profile (`--heap`): bytes sampled per function,
// with allocations made inside dependencies, Node core or builtins charged to the nearest
// app frame above them (src/profile/build-heap-tree.ts), so the site named is the user's code.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunData } from '../../run-dir/run-data.js';
import type { Frame } from '../../profile/call-tree.js';
import { parseHeapProfile } from '../../profile/heap-profile.js';
import { buildHeapTree, topAllocators } from '../../profile/build-heap-tree.js';

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
}

const cache = new WeakMap<RunData, AllocationView | null>();

export function allocationsOf(run: RunData): AllocationView | undefined {
  if (!cache.has(run)) cache.set(run, load(run));
  return cache.get(run) ?? undefined;
}

/**
 * Heap profiles listed for the run; else any heap-*.heapprofile file in the run directory
 * (the agent may finish writing it after the run stopped listening for its announcement).
 */
function heapPaths(run: RunData): string[] {
  const listed = run.profiles.filter((p) => p.kind === 'heap').map((p) => p.path);
  if (listed.length > 0) return listed;
  try {
    return readdirSync(run.dir).filter((f) => /^heap-.*\.heapprofile$/.test(f)).map((f) => join(run.dir, f));
  } catch {
    return [];
  }
}

function load(run: RunData): AllocationView | null {
  const refs = heapPaths(run).map((path) => ({ path }));
  let best: AllocationView | null = null;
  for (const ref of refs) {
    try {
      const tree = buildHeapTree(parseHeapProfile(readFileSync(ref.path, 'utf8'), ref.path), { cwd: run.cwd });
      if (tree.totalUs <= 0 || (best && best.totalBytes >= tree.totalUs)) continue;
      const sites = topAllocators(tree, { limit: 20 }).map((a) => ({ frame: tree.frames[a.frame], bytes: a.bytes, share: a.share }));
      best = { totalBytes: tree.totalUs, sites };
    } catch {
      continue;
    }
  }
  return best;
}
