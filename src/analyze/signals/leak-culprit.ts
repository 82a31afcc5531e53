// Who holds a leak's bytes, for memory-leak: from the retained view when the run has one
// (retained-heap.ts: what was still alive after the load, free of garbage), else from the
// allocation view (allocation-view.ts: every allocation, garbage included, which for a leak next to
// per-request churn names the churn). Returns the culprit, the sentences that say how it was
// found, and the evidence.

import type { RunData } from '../../run-dir/run-data.js';
import type { Frame } from '../../profile/call-tree.js';
import type { Culprit } from '../finding.js';
import { allocationsOf } from './allocation-view.js';
import { retainedOf, RETAINED_CULPRIT_MIN_SHARE, type RetainedSite, type RetainedView } from './retained-heap.js';
import type { Window } from './load-window.js';
import { frameCulprit, relativeFile } from './culprit.js';
import { round } from './stats.js';
import { describeHolder, leakHolder, type LeakHolder } from './leak-holder.js';
import { soleKeeper } from './leak-keeper.js';
import { reloadedModule } from './reloaded-module.js';
import { reloadedModuleAdvice } from '../memory-leak.advice.js';

/** An allocation site (allocation view) must hold this share of sampled bytes to be named. */
export const LEAK_CULPRIT_MIN_SHARE = 0.1;
/** Bytes no app code can be credited with are said when they are at least this share of the retained bytes. */
export const LEAK_UNKNOWN_SAY_SHARE = 0.25;

export interface LeakCulprit {
  culprit?: Culprit;
  /** Sentences for the summary (each starts with a space). */
  text: string;
  evidence: Record<string, unknown>;
  /** Whether any heap profile was recorded (`--heap`): the advice asks for one otherwise. */
  profiled: boolean;
  /** Advice for the cause found, when it is a specific one (a module reloaded per import). */
  advice?: string;
}

export function leakCulprit(run: RunData, w?: Window): LeakCulprit {
  const found = leakCulpritFromProfiles(run, w);
  // What a module reloaded per import keeps is charged to its top level; the import is the cause.
  const reloaded = reloadedModule(run);
  // Its copies' bytes split over one retainer per URL: any of them among the top ones counts.
  const retainers = (found.evidence.topRetainers as { file: string }[] | undefined) ?? [];
  const sameModule = (file: string) => relativeFile(file.replace(/[?#].*$/, ''), run.cwd) === reloaded?.file;
  if (reloaded && (!found.culprit || sameModule(found.culprit.file) || retainers.some((r) => sameModule(r.file)))) {
    const paid = found.culprit
      ? `\`${found.culprit.function}\` (${found.culprit.file}:${found.culprit.line}) is the module's own code; `
      : '';
    const text =
      ` The module ${reloaded.file} was loaded under at least ${reloaded.urls} URLs (a new query or fragment each time): ` +
      `node keeps every ES module it loads for the life of the process, so each import keeps one more copy. ${paid}` +
      (reloaded.importer
        ? `the import is in \`${reloaded.importer.function}\` (${reloaded.importer.file}:${reloaded.importer.line}).`
        : "where it is imported was not found in the app's source.");
    return {
      ...found,
      ...(reloaded.importer ? { culprit: reloaded.importer } : {}),
      text: found.text + text,
      advice: reloadedModuleAdvice,
      evidence: {
        ...found.evidence,
        reloadedModule: { file: reloaded.file, urls: reloaded.urls, ...(found.culprit ? { paidIn: found.culprit } : {}) },
      },
    };
  }
  // What the culprit stores into, from its source: a module-level collection or a closure's.
  const holder = found.culprit ? leakHolder(run.cwd, found.culprit) : undefined;
  if (holder && found.culprit) return withHolder(found, found.culprit, holder, '');
  // Flattened into framework frames: no app function, or one that stores into nothing (what it
  // allocated hangs off the framework's objects: a handler's response fields, kept through the
  // request that references the response). The one app function that ran and keeps objects is named.
  const keeper = soleKeeper(run);
  if (!keeper) return found;
  // What is kept: the allocating app function's objects (it stores into nothing itself), else the framework's.
  const kept = found.culprit
    ? `what \`${found.culprit.function}\` (${found.culprit.file}:${found.culprit.line}) allocated, which stores into none, is most likely kept there`
    : 'what the framework made for each request (objects with no app frame on their stacks, and what hangs off them) is most likely kept there';
  const text =
    ` Of the app functions that ran during the load (${keeper.candidates}), only \`${keeper.culprit.function}\` (${keeper.culprit.file}:${keeper.culprit.line}) ` +
    `stores into a collection that outlives the call: ${kept}.`;
  return withHolder({ ...found, evidence: { ...found.evidence, keptBy: 'source' } }, keeper.culprit, keeper.holder, text);
}

function withHolder(found: LeakCulprit, culprit: Culprit, holder: LeakHolder, keeperText: string): LeakCulprit {
  return {
    ...found,
    culprit,
    text: found.text + keeperText + describeHolder(holder, culprit),
    evidence: {
      ...found.evidence,
      heldIn: {
        name: holder.name,
        kind: holder.kind,
        scope: holder.scope,
        storeLine: holder.storeLine,
        ...(holder.declaredLine !== undefined ? { declaredLine: holder.declaredLine } : {}),
        ...(holder.enclosing ? { enclosing: holder.enclosing } : {}),
      },
    },
  };
}

function leakCulpritFromProfiles(run: RunData, w?: Window): LeakCulprit {
  const retained = retainedOf(run);
  if (retained) return fromRetained(run, retained, w);
  const alloc = allocationsOf(run);
  if (!alloc) return { text: '', evidence: {}, profiled: false };
  // The same site gc-pressure names: the top app allocator, or the callee V8 inlined into it.
  const top = alloc.culprit && alloc.culprit.share >= LEAK_CULPRIT_MIN_SHARE ? alloc.culprit : undefined;
  const culprit = top ? frameCulprit(top.frame, run.cwd) : undefined;
  return {
    ...(culprit ? { culprit } : {}),
    text: culprit
      ? ` The largest app allocation site is \`${culprit.function}\` at ${culprit.file}:${culprit.line} (all allocations, garbage included: this run has no view of what stayed alive).`
      : '',
    evidence: {
      topAllocators: alloc.sites
        .slice(0, 5)
        .map((s) => ({ function: s.frame.name, file: s.frame.file, line: s.frame.line, share: round(s.share, 3) })),
    },
    profiled: true,
  };
}

const pct = (x: number): string => `${Math.round(x * 100)} %`;
const where = (f: Frame, cwd: string): string =>
  `\`${f.name || '(anonymous)'}\` (${relativeFile(f.file, cwd)}${f.line > 0 ? `:${f.line}` : ''})`;

/** Node core by module, V8 by name, a dependency by its package and file. */
function maker(f: Frame, cwd: string): string {
  if (f.file.startsWith('node:')) return `\`${f.name}\` (${f.file})`;
  if (f.file === '') return `V8's \`${f.name}\``;
  const inPackage = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+[\\/].*)$/.exec(f.file)?.[1];
  return inPackage ? `\`${f.name}\` (${inPackage.replace(/\\/g, '/')}:${f.line})` : where(f, cwd);
}

function fromRetained(run: RunData, v: RetainedView, w: Window | undefined): LeakCulprit {
  const cwd = run.cwd;
  const c = v.culprit;
  const culprit = c ? frameCulprit(c.frame, cwd) : undefined;
  const since =
    w && v.from > w.start && v.from < w.end
      ? `from ${round((v.from - w.start) / 1000, 1)} s into the load on`
      : `in the last ${round(Math.max(0, v.to - v.from) / 1000, 1)} s of the run`;
  let text = ` Of the objects allocated ${since} and still alive once it was over and a full GC had run,`;
  text += c ? ` ${pct(c.share)} ${how(c, v, cwd)}.` : ` no app function holds ${pct(RETAINED_CULPRIT_MIN_SHARE)}.`;
  if (c && v.callees && v.inlinedInto)
    text +=
      ` ${where(v.inlinedInto, cwd)} calls ${v.callees.map((f) => where(f, cwd)).join(', ')}; of them only ${where(c.frame, cwd)} ` +
      `stores into a collection that outlives the call.`;
  else if (c && v.callees)
    text += ` ${where(c.frame, cwd)} calls ${v.callees.map((f) => where(f, cwd)).join(', ')}: what V8 inlined into it shows as its own.`;
  if (v.unknownShare >= LEAK_UNKNOWN_SAY_SHARE) {
    const makers = v.unowned
      .filter((u) => !u.storedBy)
      .slice(0, 2)
      .map((u) => maker(u.frame, cwd));
    text += ` ${pct(v.unknownShare)} were made with no app code on the stack${makers.length ? ` (by ${makers.join(', ')})` : ''} and no app code that keeps objects ran with them: who keeps those cannot be known from the profile.`;
  }
  return {
    ...(culprit ? { culprit } : {}),
    text,
    evidence: {
      retainedBytes: Math.round(v.totalBytes),
      topRetainers: v.sites.slice(0, 5).map((s) => ({
        function: s.frame.name,
        file: s.frame.file,
        line: s.frame.line,
        share: round(s.share, 3),
        ...(s.stored > 0 ? { storedShare: round(s.stored / v.totalBytes, 3) } : {}),
        ...(s.loaded > 0 ? { loadedShare: round(s.loaded / v.totalBytes, 3) } : {}),
      })),
      retainedWithoutAppShare: round(v.unownedShare, 3),
      ...(v.unknownShare > 0 ? { retainedUnknownShare: round(v.unknownShare, 3) } : {}),
      ...(v.inlinedInto ? { inlinedInto: `${v.inlinedInto.name} ${relativeFile(v.inlinedInto.file, cwd)}:${v.inlinedInto.line}` } : {}),
    },
    profiled: true,
  };
}

/**
 * How the culprit holds its share: it allocated it, most likely stores what others made, or
 * loaded the module that made it; and, when it ran inlined, into which caller.
 */
function how(c: RetainedSite, v: RetainedView, cwd: string): string {
  const top = v.inlinedInto ?? c.frame;
  const inlined = v.inlinedInto
    ? ` (V8 inlined it into its caller ${where(v.inlinedInto, cwd)}, which the heap profile shows instead)`
    : '';
  if (c.loaded >= c.allocated && c.loaded >= c.stored && c.module) {
    return (
      `were allocated by the top-level code of ${relativeFile(c.module.file, cwd)}, loaded again and again during the load ` +
      `(a module required per request, or deleted from require.cache) by ${where(c.frame, cwd)}${inlined}`
    );
  }
  if (c.stored > c.allocated) {
    const makers = v.unowned
      .filter((u) => u.storedBy === top)
      .slice(0, 2)
      .map((u) => maker(u.frame, cwd));
    return (
      `are most likely kept by ${where(c.frame, cwd)}${inlined}: ${pct(c.stored / v.totalBytes)} were made with no app code on the stack` +
      `${makers.length ? `, by ${makers.join(' and ')},` : ''} and it is the app code that ran in the same call and keeps objects of its own`
    );
  }
  return `were allocated in ${where(c.frame, cwd)}${inlined}`;
}
