// Where the app's own source writes a regular expression. V8 names a regexp's compiled code
// "RegExp: <source>" with no file: the pattern may be a literal, a string handed to `new
// RegExp`, or a JSON schema's `pattern` that a validator (ajv under fastify) compiles and runs
// with no app frame on the stack. The pattern's text ties such a frame to the user's code: the
// app's files under its working directory (node_modules and dot-directories left out) are
// searched for it, written as a literal (`/…/`, as `source` shows it) or inside quotes, where
// a JS or JSON string doubles every backslash (`'^(\\w+)*$'`). A search is bounded in files
// and bytes, and made only for a pattern that is hot (the caller decides); results are cached
// per run, like the run's source maps (run-source-maps.ts).

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { RunData } from '../run-dir/run-data.js';
import { perRunAndKey } from '../run-dir/per-run.js';

/** Files searched at most (in directory order, breadth first): a large monorepo is cut short, not slow. */
export const PATTERN_SEARCH_MAX_FILES = 2000;
/** Bytes read at most over one search. */
export const PATTERN_SEARCH_MAX_BYTES = 32 * 1024 * 1024;
/** Larger files are skipped (bundles, data dumps). */
export const PATTERN_SEARCH_MAX_FILE_BYTES = 1024 * 1024;
/** Directories never searched besides dot-directories: dependencies, and build or coverage output of tests. */
const SKIPPED_DIRS = new Set(['node_modules', 'coverage']);
/** Files a pattern is written in: JS and TS sources, JSON and YAML (schemas, configs). */
const SOURCE_FILES = /\.(?:[cm]?[jt]sx?|json5?|ya?ml)$/;

export interface PatternSite {
  /** Absolute path. */
  path: string;
  /** 1-based. */
  line: number;
  column: number;
}

/** The app's files to search, breadth first, within the file bound. */
export function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const queue = [root];
  while (queue.length > 0 && out.length < PATTERN_SEARCH_MAX_FILES) {
    const dir = queue.shift()!;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    } catch {
      continue;
    }
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      if (e.isDirectory()) {
        if (!SKIPPED_DIRS.has(e.name)) queue.push(join(dir, e.name));
      } else if (e.isFile() && SOURCE_FILES.test(e.name) && out.length < PATTERN_SEARCH_MAX_FILES) {
        out.push(join(dir, e.name));
      }
    }
  }
  return out;
}

/**
 * The texts a pattern with this `source` is written as, each with the delimiters that must
 * enclose it: a regexp literal, as `source` shows it (`/` escaped), and a string in quotes, with
 * the backslashes doubled (JS and JSON strings) or as they are (YAML, String.raw).
 */
export function patternNeedles(source: string): { text: string; open: string; close: string }[] {
  const out = [{ text: source, open: '/', close: '/' }];
  const unescaped = source.replace(/\\\//g, '/');
  const doubled = unescaped.replace(/\\/g, '\\\\');
  for (const q of ["'", '"', '`']) {
    out.push({ text: doubled, open: q, close: q });
    if (doubled !== unescaped) out.push({ text: unescaped, open: q, close: q });
  }
  return out;
}

/** Where `text` writes the pattern: one site per line. */
function sitesIn(text: string, needles: ReturnType<typeof patternNeedles>, path: string): PatternSite[] {
  const lines = new Map<number, PatternSite>();
  for (const n of needles) {
    for (let at = text.indexOf(n.text); at >= 0; at = text.indexOf(n.text, at + 1)) {
      if (text[at - 1] !== n.open || text[at + n.text.length] !== n.close) continue;
      const before = text.slice(0, at);
      const line = before.split('\n').length;
      if (!lines.has(line)) lines.set(line, { path, line, column: at - before.lastIndexOf('\n') });
    }
  }
  return [...lines.values()];
}

/** The text of each source file under `root`, within the search's bounds (files over PATTERN_SEARCH_MAX_FILE_BYTES skipped, PATTERN_SEARCH_MAX_BYTES in all). */
export function* sourceTexts(root: string): Generator<{ path: string; text: string }> {
  let bytes = 0;
  for (const path of sourceFiles(root)) {
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      continue;
    }
    if (size > PATTERN_SEARCH_MAX_FILE_BYTES) continue;
    if (bytes + size > PATTERN_SEARCH_MAX_BYTES) break;
    bytes += size;
    try {
      yield { path, text: readFileSync(path, 'utf8') };
    } catch {
      continue;
    }
  }
}

/** Every place under `root` that writes the regexp whose `source` V8 reports, within the bounds. */
export function findPatternSites(root: string, source: string): PatternSite[] {
  if (source === '') return [];
  const needles = patternNeedles(source);
  const out: PatternSite[] = [];
  for (const { path, text } of sourceTexts(root)) {
    if (needles.some((n) => text.includes(n.text))) out.push(...sitesIn(text, needles, path));
  }
  // A TypeScript project's compiled copy says the same as its source: the source is the place to edit.
  const written = out.filter((s) => !isBuildOutput(root, s.path));
  return written.length > 0 ? written : out;
}

/** Directories compilers write to: a pattern found there and in the sources is the sources'. */
const BUILD_DIRS = new Set(['dist', 'build', 'out']);

function isBuildOutput(root: string, path: string): boolean {
  return relative(root, path)
    .split(sep)
    .some((part) => BUILD_DIRS.has(part));
}

/** findPatternSites over the run's working directory, once per pattern and run. */
export const runPatternSites: (run: Pick<RunData, 'cwd'>, source: string) => PatternSite[] = perRunAndKey(
  (run: Pick<RunData, 'cwd'>, source: string) => findPatternSites(run.cwd, source),
);
