// The paths by which one call site is reached. A site's kept stack used to be the first one
// captured (or the shortest): a database helper called once for the list and then once per item
// kept the list query's stack, so the waits were said to be awaited in the function that made one
// call of thirty-one (probe round s: a GraphQL-like executor's `recentOrders` named instead of the
// per-order `customer` resolver). Each site now counts its captures per path (the frames above
// the site) and reports the stack of the path most of them came by; of paths seen as often, the
// shorter (a loop re-arming its timer from a resumed async function shows the loop's own function
// at the bottom, not whatever started the loop). Bounded: MAX_VARIANTS paths per site, later ones
// counted under none. Used for timer sites; SiteCounter's sites keep their first stack (a worker
// pool's postMessage is reached mostly from the callback dispatching the next job, and off-loop-cpu
// names where the request path enters the pool).
import type { CallSite } from '../protocol.js';

export const MAX_VARIANTS = 4;

export interface StackVariants {
  keys: string[];
  counts: number[];
  stacks: CallSite[][];
}

function pathKey(stack: readonly CallSite[]): string {
  let key = '';
  for (let i = 1; i < stack.length; i++) key += `${stack[i].function}@${stack[i].file}:${stack[i].line}|`;
  return key;
}

/** Counts one capture of `stack` (site first); returns the stack of the path seen most so far. */
export function noteVariant(v: StackVariants, stack: CallSite[]): CallSite[] {
  const key = pathKey(stack);
  const at = v.keys.indexOf(key);
  if (at >= 0) v.counts[at]++;
  else if (v.keys.length < MAX_VARIANTS) {
    v.keys.push(key);
    v.counts.push(1);
    v.stacks.push(stack);
  }
  return commonStack(v) ?? stack;
}

/** The stack of the path with the most captures (ties: the shorter, then the first seen). */
export function commonStack(v: StackVariants): CallSite[] | undefined {
  let best = -1;
  for (let i = 0; i < v.keys.length; i++) {
    if (best < 0 || v.counts[i] > v.counts[best] || (v.counts[i] === v.counts[best] && v.stacks[i].length < v.stacks[best].length))
      best = i;
  }
  return best < 0 ? undefined : v.stacks[best];
}

export function newVariants(): StackVariants {
  return { keys: [], counts: [], stacks: [] };
}
