// A run's CPU profile as every view reads it (the analyzers, the HTML report, the exports):
// parsed, then, through the function ranges the agents captured for the run, with the functions
// V8 inlined given their own nodes (inlined-frames.ts) and anonymous functions named by the
// function they lie in (anonymous-names.ts).

import type { ProfileRef, RunData } from '../run-dir/run-data.js';
import { parseCpuProfile, type CpuProfile } from './cpu-profile.js';
import { expandInlinedFrames } from './inlined-frames.js';
import { nameAnonymousFrames } from './anonymous-names.js';
import { readCpuProfile } from './read-profile.js';

/** The profile `text` of `ref` (its path names it in errors), inlined functions expanded. */
export function parseRunCpuProfile(run: Pick<RunData, 'functionRanges'>, text: string, ref: Pick<ProfileRef, 'path'>): CpuProfile {
  return withRanges(parseCpuProfile(text, ref.path), run);
}

export async function readRunCpuProfile(run: Pick<RunData, 'functionRanges'>, ref: Pick<ProfileRef, 'path'>): Promise<CpuProfile> {
  return withRanges(await readCpuProfile(ref.path), run);
}

function withRanges(profile: CpuProfile, run: Pick<RunData, 'functionRanges'>): CpuProfile {
  const expanded = expandInlinedFrames(profile, run.functionRanges);
  nameAnonymousFrames(
    expanded.nodes.map((n) => n.callFrame),
    run.functionRanges,
  );
  return expanded;
}
