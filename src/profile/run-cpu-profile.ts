// A run's CPU profile as every view reads it (the analyzers, the HTML report, the exports):
// parsed, then with the functions V8 inlined given their own nodes, through the function ranges
// the agents captured for the run (see inlined-frames.ts).

import type { ProfileRef, RunData } from '../run-dir/run-data.js';
import { parseCpuProfile, type CpuProfile } from './cpu-profile.js';
import { expandInlinedFrames } from './inlined-frames.js';
import { readCpuProfile } from './read-profile.js';

/** The profile `text` of `ref` (its path names it in errors), inlined functions expanded. */
export function parseRunCpuProfile(run: Pick<RunData, 'functionRanges'>, text: string, ref: Pick<ProfileRef, 'path'>): CpuProfile {
  return expandInlinedFrames(parseCpuProfile(text, ref.path), run.functionRanges);
}

export async function readRunCpuProfile(run: Pick<RunData, 'functionRanges'>, ref: Pick<ProfileRef, 'path'>): Promise<CpuProfile> {
  return expandInlinedFrames(await readCpuProfile(ref.path), run.functionRanges);
}
