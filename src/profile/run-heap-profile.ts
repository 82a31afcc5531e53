// A run's allocation profile as every view reads it (the analyzers, the HTML report, the
// exports): parsed, then with anonymous functions named by the function they lie in, through
// the function ranges the agents captured for the run (anonymous-names.ts), as in its CPU profile.

import type { ProfileRef, RunData } from '../run-dir/run-data.js';
import type { CpuCallFrame } from './cpu-profile.js';
import { parseHeapProfile, type HeapProfile } from './heap-profile.js';
import { readHeapProfile } from './read-profile.js';
import { nameAnonymousFrames } from './anonymous-names.js';

export function parseRunHeapProfile(run: Pick<RunData, 'functionRanges'>, text: string, ref: Pick<ProfileRef, 'path'>): HeapProfile {
  return withRanges(parseHeapProfile(text, ref.path), run);
}

export async function readRunHeapProfile(run: Pick<RunData, 'functionRanges'>, ref: Pick<ProfileRef, 'path'>): Promise<HeapProfile> {
  return withRanges(await readHeapProfile(ref.path), run);
}

function withRanges(profile: HeapProfile, run: Pick<RunData, 'functionRanges'>): HeapProfile {
  nameAnonymousFrames(callFrames(profile), run.functionRanges);
  return profile;
}

/** Every node's call frame, iteratively (deep trees must not overflow the stack). */
function* callFrames(profile: HeapProfile): Generator<CpuCallFrame> {
  const stack = [profile.head];
  for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
    yield n.callFrame;
    for (const c of n.children) stack.push(c);
  }
}
