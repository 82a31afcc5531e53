// Which dependencies a call tree shows as the app's framework and which as its libraries: a
// framework calls the app (a frame of its package above an app frame: the router calling a
// handler); a library is called by the app (a frame of its package right under an app frame: a
// logger's `info`, an HTTP client's `get`) and never calls it.

import type { CallTree } from './call-tree.js';
import { dependencyName } from './work-kind.js';

const frameworksOf = new WeakMap<CallTree, ReadonlySet<string>>();

/** Packages with a frame above an app frame: they call the app. Read once per tree (work-breakdown, allocation-view and appLibraries ask). */
export function frameworkPackages(tree: CallTree): ReadonlySet<string> {
  let known = frameworksOf.get(tree);
  if (known === undefined) frameworksOf.set(tree, (known = readFrameworkPackages(tree)));
  return known;
}

function readFrameworkPackages(tree: CallTree): Set<string> {
  const out = new Set<string>();
  const frameOf = (i: number) => tree.frames[tree.frame[i]];
  for (let i = 1; i < tree.frame.length; i++) {
    if (frameOf(i).kind !== 'app') continue;
    const p = tree.parent[i];
    // The first app frame of a chain: every dependency above it calls the app.
    if (p > 0 && frameOf(p).kind === 'app') continue;
    for (let a = p; a > 0; a = tree.parent[a]) if (frameOf(a).kind === 'deps') out.add(dependencyName(frameOf(a).file));
  }
  return out;
}

/** Packages the app calls directly (a frame right under an app frame) that never call it. */
export function appLibraries(tree: CallTree): Set<string> {
  const out = new Set<string>();
  const frameOf = (i: number) => tree.frames[tree.frame[i]];
  for (let i = 1; i < tree.frame.length; i++) {
    const p = tree.parent[i];
    if (frameOf(i).kind === 'deps' && p > 0 && frameOf(p).kind === 'app') out.add(dependencyName(frameOf(i).file));
  }
  for (const pkg of frameworkPackages(tree)) out.delete(pkg);
  return out;
}

/** Frame index of the app function calling `pkg` with the most weight under its calls (CPU time or bytes), if any does. */
export function libraryCaller(tree: CallTree, pkg: string): number | undefined {
  const by = new Map<number, number>();
  for (let i = 1; i < tree.frame.length; i++) {
    const p = tree.parent[i];
    const fr = tree.frames[tree.frame[i]];
    if (fr.kind !== 'deps' || p <= 0 || tree.frames[tree.frame[p]].kind !== 'app' || dependencyName(fr.file) !== pkg) continue;
    by.set(tree.frame[p], (by.get(tree.frame[p]) ?? 0) + tree.total[i] + 1);
  }
  let best: number | undefined;
  for (const [f, w] of by) if (best === undefined || w > (by.get(best) ?? 0)) best = f;
  return best;
}
