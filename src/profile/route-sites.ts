// Where the app builds a route table. Routes registered in a loop from a template
// (`/${section}/category-${i}/:slug`) compile to patterns V8 names one by one ("RegExp:
// ^\/shop\/category-17(?:\/([^/]+?))\/?$"): none is written in the source, but the literal text
// the caught patterns share is. A pattern's route path is what is left once its regexp syntax
// (anchors, groups, classes, quantifiers, escapes) is taken out; its pieces between slashes and
// digit runs of at least ROUTE_FRAGMENT_MIN_CHARS characters that at least ROUTE_FRAGMENT_MIN_SHARE
// of the patterns have are the table's fragments, and a source line of the app (pattern-sites.ts's
// files and bounds) holding them all is where its paths are written.

import type { RunData } from '../run-dir/run-data.js';
import { perRunAndKey } from '../run-dir/per-run.js';
import { sourceTexts, type PatternSite } from './pattern-sites.js';

/** Shorter pieces ("t", "shop") are too common in source to place a table. */
export const ROUTE_FRAGMENT_MIN_CHARS = 4;
/** A piece most of the caught patterns share is the template's; the rest vary per route. */
export const ROUTE_FRAGMENT_MIN_SHARE = 0.8;
/** More lines than this holding the fragments place nothing. */
export const ROUTE_SITE_MAX_LINES = 3;

/** A route regexp's literal path: "^\/t\/store-9(?:\/([^\/]+))?$" → "/t/store-9/". */
export function routePathText(source: string): string {
  return source
    .replace(/\[(?:[^\]\\]|\\.)*\]/g, '')
    .replace(/\(\?[:=!]|[()^$]|[*+?]|\{\d+(?:,\d*)?\}/g, '')
    .replace(/\\(.)/g, '$1');
}

/** The fragments most of the patterns share (see the header), longest first. */
export function routeFragments(sources: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const source of sources) {
    const pieces = new Set(
      routePathText(source)
        .split(/\/+|\d+/)
        .filter((p) => p.length >= ROUTE_FRAGMENT_MIN_CHARS),
    );
    for (const p of pieces) counts.set(p, (counts.get(p) ?? 0) + 1);
  }
  return [...counts]
    .filter(([, n]) => n >= sources.length * ROUTE_FRAGMENT_MIN_SHARE)
    .map(([p]) => p)
    .sort((a, b) => b.length - a.length);
}

/** The lines under `root` that hold every fragment (none when no fragment, or more than ROUTE_SITE_MAX_LINES). */
export function findRouteSites(root: string, fragments: readonly string[]): PatternSite[] {
  if (fragments.length === 0) return [];
  const out: PatternSite[] = [];
  for (const { path, text } of sourceTexts(root)) {
    if (!fragments.every((f) => text.includes(f))) continue;
    text.split('\n').forEach((line, i) => {
      if (fragments.every((f) => line.includes(f))) out.push({ path, line: i + 1, column: line.indexOf(fragments[0]) + 1 });
    });
    if (out.length > ROUTE_SITE_MAX_LINES) return [];
  }
  return out;
}

/**
 * The function a source line lies in, read from the source when V8's function ranges do not cover
 * the file (a route table is built at startup: its file may run no function during the load). The
 * nearest line above with less indentation that declares a function (`function f(`, `f = (...) =>`,
 * `f(...) {` as a method) names it; undefined at the module's top level.
 */
export function enclosingFunctionName(text: string, line: number): string | undefined {
  const lines = text.split('\n');
  const indent = (l: string) => l.length - l.trimStart().length;
  let depth = indent(lines[line - 1] ?? '');
  for (let i = line - 2; i >= 0 && depth > 0; i--) {
    const l = lines[i];
    if (l.trim() === '' || indent(l) >= depth) continue;
    depth = indent(l);
    const m =
      /\bfunction\s*\*?\s*([\w$]+)\s*\(/.exec(l) ??
      /([\w$]+)\s*[=:]\s*(?:async\s*)?(?:function\b|\([^)]*\)\s*=>|[\w$]+\s*=>)/.exec(l) ??
      /^\s*(?:(?:static|async|public|private|protected)\s+)*([\w$]+)\s*\([^)]*\)\s*\{/.exec(l);
    if (m && !/^(if|for|while|switch|catch|with)$/.test(m[1])) return m[1];
  }
  return undefined;
}

/** findRouteSites over the run's working directory, once per set of fragments and run. */
export const runRouteSites: (run: Pick<RunData, 'cwd'>, fragments: string) => PatternSite[] = perRunAndKey(
  (run: Pick<RunData, 'cwd'>, fragments: string) => findRouteSites(run.cwd, fragments === '' ? [] : fragments.split('\0')),
);
