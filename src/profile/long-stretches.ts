// Long stretches: how long an app function held the thread without a break, from a CPU
// profile's samples in time order. A function with little total CPU can still block the loop
// for 100 ms at a time (a timer job rebuilding an index), while a cheap request handler that
// carries most of the CPU never holds it for more than a fraction of a millisecond. Delay on
// the loop is explained by the first, not by the second.
//
// A stretch of a function is a run of consecutive samples with it on the stack; an idle sample
// ends every stretch, a GC or (program) sample (the collector working for the code that runs)
// neither ends nor starts one. Consecutive calls of a function look like one stretch to a
// sampler, so only stretches much longer than a sample interval mean anything: the caller
// chooses the minimum. A function and the closures written inside it ("(anonymous in f)") are
// one function here.

import type { Frame } from './call-tree.js';
import type { StackSamples } from './stack-samples.js';
import { functionKey } from './anonymous-names.js';

export interface LongStretches {
  /** The function (its outermost frame in the first long stretch). */
  frame: Frame;
  /** Depth of that frame in its stack (1 = called from the root). */
  depth: number;
  /** Stretches at least the minimum long, their summed and longest duration (µs). */
  count: number;
  totalUs: number;
  maxUs: number;
}

interface Open {
  frame: Frame;
  depth: number;
  us: number;
}

const neutral = new Set(['gc', 'program']);

/** Per app function, its stretches of at least `minUs`, most time first; none without a timeline. */
export function longStretches(samples: StackSamples, minUs: number): LongStretches[] {
  const line = samples.timeline;
  if (!line) return [];
  const out = new Map<string, LongStretches>();
  let open = new Map<string, Open>();
  const close = (key: string, o: Open) => {
    if (o.us < minUs) return;
    const e = out.get(key);
    if (e) {
      e.count++;
      e.totalUs += o.us;
      e.maxUs = Math.max(e.maxUs, o.us);
    } else out.set(key, { frame: o.frame, depth: o.depth, count: 1, totalUs: o.us, maxUs: o.us });
  };
  for (let s = 0; s < line.stack.length; s++) {
    const stack = samples.stacks[line.stack[s]];
    const weight = line.weight[s];
    const leaf = samples.frames[stack[stack.length - 1]];
    if (stack.length === 1 && neutral.has(leaf.kind)) {
      for (const o of open.values()) o.us += weight;
      continue;
    }
    const next = new Map<string, Open>();
    for (let d = 0; d < stack.length; d++) {
      const f = samples.frames[stack[d]];
      if (f.kind !== 'app') continue;
      const key = functionKey(f);
      if (next.has(key)) continue;
      const o = open.get(key) ?? { frame: f, depth: d + 1, us: 0 };
      o.us += weight;
      next.set(key, o);
    }
    for (const [key, o] of open) if (!next.has(key)) close(key, o);
    open = next;
  }
  for (const [key, o] of open) close(key, o);
  return [...out.values()].sort((a, b) => b.totalUs - a.totalUs);
}

/**
 * The function that held the thread in the long stretches: of those with nearly the most
 * long-stretch time (the job and the functions that called it hold the same stretches), the
 * innermost, which is the most precise place to look.
 */
export function longestHolder(stretches: LongStretches[], nearShare = 0.9): LongStretches | undefined {
  const top = stretches[0];
  if (!top) return undefined;
  return stretches.filter((s) => s.totalUs >= nearShare * top.totalUs).sort((a, b) => b.depth - a.depth)[0];
}
