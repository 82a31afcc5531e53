// readRunDir: a run directory read back into RunData, the input of every analyzer and of
// `hotpath report`. run-dir/ reads the files (readRunFiles); what needs the profile model is
// done here, once: each profile is parsed to know it can be used, and the call sites the agents
// reported are mapped through the run's source maps. The policy for a missing or corrupt file is
// docs/run-directory.md's (Reading a run directory back): a warning, never a failed read.

import { basename } from 'node:path';
import { readRunFiles } from '../run-dir/read-run-dir.js';
import type { ProfileRef, RunData } from '../run-dir/run-data.js';
import { readProfileFile } from '../run-dir/read-profile-file.js';
import { parseCpuProfile } from './cpu-profile.js';
import { parseHeapProfile } from './heap-profile.js';
import { mapRunCallSites } from './run-source-maps.js';

export async function readRunDir(dir: string): Promise<RunData> {
  const run = await readRunFiles(dir);
  checkProfiles(run.profiles, run.readWarnings);
  mapRunCallSites(run, run.threads);
  return run;
}

/**
 * Each profile parsed once to know it can be used: an empty, truncated or malformed one is
 * marked `unusable` with a warning (the analysis leaves it out and does not call the run
 * healthy). The parse is not kept: the views read the profiles they use (run-cpu-profile.ts).
 */
function checkProfiles(refs: ProfileRef[], warnings: string[]): void {
  for (const ref of refs) {
    try {
      const text = readProfileFile(ref.path);
      if (ref.kind === 'cpu') parseCpuProfile(text, ref.path);
      else parseHeapProfile(text, ref.path);
    } catch (err) {
      ref.unusable = (err as Error).message;
      warnings.push(`${ref.kind} profile ${basename(ref.path)} cannot be used and is left out of the diagnosis: ${ref.unusable}`);
    }
  }
}
