// One tick log, start to end: read, name every frame, compute what `node --prof-process`
// prints and convert the ticks into a CPU profile. Plain data out, so a worker can post it.

import type { CpuProfile } from '../profile/cpu-profile.js';
import { processTickLog } from './resolve-ticks.js';
import { computeProfStatistics, type ProfStatistics } from './prof-statistics.js';
import { ticksToCpuProfile } from './ticks-to-cpuprofile.js';
import type { SymbolizeOptions } from './symbolize.js';

export interface TickLogAnalysis {
  file: string;
  pid: number;
  statistics: ProfStatistics;
  /** The ticks as a CPU profile (left out when only the figures are asked for). */
  profile: CpuProfile;
  /** µs from the log's start to its first and last tick. */
  firstTickUs: number;
  lastTickUs: number;
}

export interface AnalyzeOptions extends SymbolizeOptions {
  /** false: skip the CPU profile (an empty one is returned). */
  profile?: boolean;
}

const emptyProfile: CpuProfile = { nodes: [], startTime: 0, endTime: 0, samples: [], timeDeltas: [] };

export async function analyzeTickLog(file: string, options: AnalyzeOptions = {}): Promise<TickLogAnalysis> {
  const resolved = await processTickLog(file, options);
  return {
    file,
    pid: resolved.pid,
    statistics: computeProfStatistics(resolved),
    profile: options.profile === false ? emptyProfile : ticksToCpuProfile(resolved),
    firstTickUs: resolved.times[0] ?? 0,
    lastTickUs: resolved.times[resolved.times.length - 1] ?? 0,
  };
}
