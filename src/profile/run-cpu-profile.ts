// A run's CPU profile as every view reads it (the analyzers, the HTML report, the exports):
// parsed, then, through the function ranges the agents captured for the run, with the functions
// V8 inlined given their own nodes (inlined-frames.ts) and anonymous functions named by the
// function they lie in (anonymous-names.ts). runCpuProfile reads, parses and expands each file
// once per run (run-dir/per-run.ts), a failure included: the analysis and report.html of one
// run share the profile.

import type { ProfileRef, RunData } from '../run-dir/run-data.js';
import { perRunAndKey } from '../run-dir/per-run.js';
import { readProfileFile } from '../run-dir/read-profile-file.js';
import { parseCpuProfile, type CpuProfile } from './cpu-profile.js';
import { expandInlinedFrames } from './inlined-frames.js';
import { nameAnonymousByCaller, nameAnonymousFrames } from './anonymous-names.js';

type Ranges = Pick<RunData, 'functionRanges'>;

/** The profile `text` of `ref` (its path names it in errors), inlined functions expanded. */
export function parseRunCpuProfile(run: Ranges, text: string, ref: Pick<ProfileRef, 'path'>): CpuProfile {
  return withRanges(parseCpuProfile(text, ref.path), run);
}

const byPath = perRunAndKey((run: Ranges, path: string) => parseRunCpuProfile(run, readProfileFile(path), { path }));

/**
 * The run's CPU profile of `ref`, read once per run and expanded; throws HOTPATH_ERR_PROFILE
 * when the file cannot be read or is not a profile (again on every call, without reading again).
 */
export function runCpuProfile(run: Ranges, ref: Pick<ProfileRef, 'path'>): CpuProfile {
  return byPath(run, ref.path);
}

function withRanges(profile: CpuProfile, run: Ranges): CpuProfile {
  const expanded = expandInlinedFrames(profile, run.functionRanges);
  nameAnonymousFrames(
    expanded.nodes.map((n) => n.callFrame),
    run.functionRanges,
  );
  nameAnonymousByCaller(expanded.nodes, run.functionRanges);
  return expanded;
}
