// The functions of one script as V8 reported them at the end of the run (their ranges, from
// src/agent/profiling/function-ranges.ts), for "which function is at this position / on this
// line / holds this one". Used to give inlined functions their time back (inlined-frames.ts)
// and to say which named function an anonymous one lies in (anonymous-names.ts).

import type { FunctionRangeRow } from '../agent/profiling/function-ranges.js';
import { urlToPath } from './classify-frame.js';

/** Function ranges per script URL, as written by the agent (`functions-<pid>-<tid>.json`). */
export type FunctionRanges = Readonly<Record<string, readonly FunctionRangeRow[]>>;

export interface Fn {
  name: string;
  url: string;
  sl: number;
  sc: number;
  el: number;
  ec: number;
  count: number;
  /** The innermost function holding this one. */
  parent?: Fn;
}

const before = (l1: number, c1: number, l2: number, c2: number) => l1 < l2 || (l1 === l2 && c1 < c2);
export const contains = (outer: Fn, inner: Fn) =>
  !before(inner.sl, inner.sc, outer.sl, outer.sc) && !before(outer.el, outer.ec, inner.el, inner.ec) && outer !== inner;
const holds = (f: Fn, line: number, col: number) => !before(line, col, f.sl, f.sc) && before(line, col, f.el, f.ec);
const span = (f: Fn) => (f.el - f.sl) * 1e6 + (f.ec - f.sc);

/**
 * The functions of one script, for "which function is at this position / on this line". V8's
 * ranges nest (a function lies inside another or apart from it), so each function has one
 * parent, and a lookup is a binary search plus a walk up; lookups are remembered too.
 */
export class ScriptFunctions {
  /** By start position. */
  readonly #fns: Fn[];
  readonly #startsOn = new Map<number, Fn[]>();
  readonly #endsOn = new Map<number, Fn[]>();
  readonly #at = new Map<string, Fn | undefined>();
  readonly #onLine = new Map<number, Fn | 'shared' | undefined>();

  constructor(url: string, rows: readonly FunctionRangeRow[]) {
    this.#fns = rows
      .filter((r) => Array.isArray(r) && r.length >= 6 && r.slice(1).every((x) => typeof x === 'number'))
      .map(([name, sl, sc, el, ec, count]) => ({ name: String(name), url, sl, sc, el, ec, count }))
      .sort((a, b) => a.sl - b.sl || a.sc - b.sc || span(b) - span(a));
    const stack: Fn[] = [];
    for (const f of this.#fns) {
      while (stack.length > 0 && !contains(stack[stack.length - 1], f)) stack.pop();
      f.parent = stack[stack.length - 1];
      stack.push(f);
      push(this.#startsOn, f.sl, f);
      push(this.#endsOn, f.el, f);
    }
  }

  /** Index of the last function starting at or before the position. */
  #lastStart(line: number, col: number): number {
    let lo = 0;
    let hi = this.#fns.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const f = this.#fns[mid];
      if (before(line, col, f.sl, f.sc)) hi = mid - 1;
      else {
        found = mid;
        lo = mid + 1;
      }
    }
    return found;
  }

  /** The innermost function holding the position (0-based). */
  at(line: number, col: number): Fn | undefined {
    const key = `${line}:${col}`;
    if (!this.#at.has(key)) {
      const i = this.#lastStart(line, col);
      let f = i >= 0 ? this.#fns[i] : undefined;
      while (f && !holds(f, line, col)) f = f.parent;
      this.#at.set(key, f);
    }
    return this.#at.get(key);
  }

  /** The functions of that name (0 when anonymous or unknown). */
  named(name: string): Fn[] {
    return name === '' ? [] : this.#fns.filter((f) => f.name === name);
  }

  /**
   * The nearest named function holding the position (0-based) that is not the function starting
   * there: for an anonymous function (a callback, a Promise executor), the one it was written in.
   */
  enclosingName(line: number, col: number): string | undefined {
    for (let f = this.at(line, col); f; f = f.parent) {
      if (f.sl === line && f.sc === col) continue;
      if (f.name !== '') return f.name;
    }
    return undefined;
  }

  /**
   * The innermost function with code on `line` (0-based), or 'shared' when two functions that do
   * not hold one another both have code on it. Those are the innermost function spanning the
   * line and its parents, and the functions starting or ending on it.
   */
  onLine(line: number): Fn | 'shared' | undefined {
    if (this.#onLine.has(line)) return this.#onLine.get(line);
    const on = new Set<Fn>([...(this.#startsOn.get(line) ?? []), ...(this.#endsOn.get(line) ?? [])]);
    const i = this.#lastStart(line, Number.MAX_SAFE_INTEGER);
    let f = i >= 0 ? this.#fns[i] : undefined;
    while (f && f.el < line) f = f.parent;
    for (; f; f = f.parent) on.add(f);
    let inner: Fn | undefined;
    for (const g of on) if (!inner || span(g) < span(inner)) inner = g;
    const found = inner === undefined ? undefined : [...on].every((g) => g === inner || contains(g, inner!)) ? inner : 'shared';
    this.#onLine.set(line, found);
    return found;
  }
}

export function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * One key per script whatever form its URL takes: V8 names a CommonJS file by its plain path in
 * a heap profile's call frames and by its `file://` URL in the CPU profile and in the coverage the
 * ranges come from (ES modules are `file://` everywhere). Scripts that are not files keep their URL.
 */
export function scriptKey(url: string): string {
  return urlToPath(url) ?? url;
}

interface ScriptEntry {
  /** The URL the ranges were written under (the functions carry it, as the CPU profile does). */
  url: string;
  rows: readonly FunctionRangeRow[];
  built?: ScriptFunctions;
}

const built = new WeakMap<FunctionRanges, Map<string, ScriptEntry>>();

function scriptsOf(ranges: FunctionRanges): Map<string, ScriptEntry> {
  let scripts = built.get(ranges);
  if (!scripts) {
    scripts = new Map();
    for (const [url, rows] of Object.entries(ranges)) {
      const key = scriptKey(url);
      if (!scripts.has(key)) scripts.set(key, { url, rows });
    }
    built.set(ranges, scripts);
  }
  return scripts;
}

/**
 * The functions of one script of a run's `ranges`, or undefined when it has none, looked up by
 * `scriptKey` (a heap profile's plain path finds the ranges of its `file://` URL). Built once per
 * ranges object and script: every view of a run (its CPU and heap profiles, its stalls) shares them.
 */
export function scriptFunctions(ranges: FunctionRanges | undefined, url: string): ScriptFunctions | undefined {
  if (!ranges) return undefined;
  const entry = scriptsOf(ranges).get(scriptKey(url));
  if (!entry) return undefined;
  return (entry.built ??= new ScriptFunctions(entry.url, entry.rows));
}
