// A run's allocation profile as every view reads it (the analyzers, the HTML report, the
// exports): parsed, then with anonymous functions named by the function they lie in, through
// the function ranges the agents captured for the run (anonymous-names.ts), as in its CPU
// profile. runHeapProfile reads and parses each file once per run (run-dir/per-run.ts), a
// failure included.

import type { ProfileRef, RunData } from '../run-dir/run-data.js';
import { perRunAndKey } from '../run-dir/per-run.js';
import { readProfileFile } from '../run-dir/read-profile-file.js';
import type { CpuCallFrame } from './cpu-profile.js';
import { parseHeapProfile, type HeapProfile } from './heap-profile.js';
import { nameAnonymousFrames } from './anonymous-names.js';

type Ranges = Pick<RunData, 'functionRanges'>;

export function parseRunHeapProfile(run: Ranges, text: string, ref: Pick<ProfileRef, 'path'>): HeapProfile {
  return withRanges(parseHeapProfile(text, ref.path), run);
}

const byPath = perRunAndKey((run: Ranges, path: string) => parseRunHeapProfile(run, readProfileFile(path), { path }));

/**
 * The run's heap profile (allocations or retained) of `ref`, read once per run; throws
 * HOTPATH_ERR_PROFILE when the file cannot be read or is not a profile.
 */
export function runHeapProfile(run: Ranges, ref: Pick<ProfileRef, 'path'>): HeapProfile {
  return byPath(run, ref.path);
}

function withRanges(profile: HeapProfile, run: Ranges): HeapProfile {
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
