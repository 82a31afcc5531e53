// Search in a flame view: which frames match a query (substring, case-insensitive, or a
// /regular expression/), and the share of the shown weight they account for, counting
// each stack once even when the matched function recurses.

import type { ViewTree } from './tree-builder.js';

/** Compiles a query into a predicate; null for an empty query, undefined for an invalid regex. */
export function compileQuery(query: string): ((s: string) => boolean) | null | undefined {
  const q = query.trim();
  if (q === '') return null;
  const rx = /^\/(.+)\/([a-z]*)$/.exec(q);
  if (rx) {
    try {
      const re = new RegExp(rx[1], rx[2].includes('i') ? 'i' : '');
      return (s) => re.test(s);
    } catch {
      return undefined;
    }
  }
  const lower = q.toLowerCase();
  return (s) => s.toLowerCase().includes(lower);
}

/** Frames whose name or file matches. */
export function matchFrames(names: string[], files: string[], test: (s: string) => boolean): Uint8Array {
  const out = new Uint8Array(names.length);
  for (let f = 0; f < names.length; f++) out[f] = test(names[f]) || (files[f] !== '' && test(files[f])) ? 1 : 0;
  return out;
}

/** Share of the root's weight under matched frames (outermost matches only). */
export function matchedShare(tree: ViewTree, match: Uint8Array, root = 0): number {
  const total = tree.total[root];
  if (total <= 0) return 0;
  let sum = 0;
  const end = root + tree.size[root];
  let i = root;
  while (i < end) {
    const f = tree.frame[i];
    if (f >= 0 && match[f]) {
      sum += tree.total[i];
      i += tree.size[i];
    } else i++;
  }
  return sum / total;
}
