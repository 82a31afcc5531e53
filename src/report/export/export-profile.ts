// Exports one profile of a run directory to pprof, speedscope, folded stacks or the original
// V8 file: picks the profile (the target thread's, or --thread pid:tid), converts it with
// frames classified and source-mapped, and writes the file (by default next to the profile).

import { mkdir } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { hotpathError } from '../../errors.js';
import type { ProfileRef, RunData } from '../../run-dir/run-data.js';
import { runCpuProfile } from '../../profile/run-cpu-profile.js';
import { runHeapProfile } from '../../profile/run-heap-profile.js';
import { readProfileFile } from '../../run-dir/read-profile-file.js';
import { buildHeapTree } from '../../profile/build-heap-tree.js';
import { cpuStackSamples, treeStackSamples, type StackSamples } from '../../profile/stack-samples.js';
import { foldedChunks } from './folded.js';
import { toPprof } from './pprof.js';
import { toSpeedscope } from './speedscope.js';
import { runResolver } from '../../profile/run-source-maps.js';
import { writeFilesAtomically } from '../write-atomic.js';

export const EXPORT_FORMATS = ['pprof', 'speedscope', 'folded', 'cpuprofile'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportOptions {
  format: ExportFormat;
  /** Output file; default next to the profile. */
  out?: string;
  /** `pid:tid` of the thread whose profile to export. */
  thread?: string;
  /** Export the heap (allocation) profile instead of the CPU profile. */
  heap?: boolean;
  /** Written into the file where the format has room (speedscope exporter, pprof comment). */
  exporter?: string;
}

export interface ExportResult {
  path: string;
  profile: ProfileRef;
  /** Other threads that have a profile of the same kind (`--thread` picks one). */
  others: ProfileRef[];
  /** Sum of the exported weights: µs for CPU, bytes for heap. */
  total: number;
}

const extensions: Record<ExportFormat, string> = { pprof: '.pb.gz', speedscope: '.speedscope.json', folded: '.folded', cpuprofile: '' };

function parseThread(thread: string): { pid: number; threadId: number } {
  const m = /^(\d+)(?::(\d+))?$/.exec(thread.trim());
  if (!m)
    throw hotpathError('HOTPATH_ERR_INVALID_OPTION', `--thread must be <pid>:<threadId> or <pid>; got ${JSON.stringify(thread)}`, {
      showUsage: true,
    });
  return { pid: Number(m[1]), threadId: m[2] === undefined ? -1 : Number(m[2]) };
}

const describe = (p: ProfileRef) => `${p.pid}:${p.threadId} (${basename(p.path)})`;

/** The profile to export: the given thread's, else a target thread's with the longest window. */
export function chooseProfile(run: RunData, kind: 'cpu' | 'heap', thread?: string): { chosen: ProfileRef; others: ProfileRef[] } {
  const all = run.profiles.filter((p) => p.kind === kind);
  if (all.length === 0) {
    const has = run.profiles.map(describe).join(', ') || 'none';
    throw hotpathError(
      'HOTPATH_ERR_NO_PROFILE',
      `${run.dir} holds no ${kind} profile${kind === 'heap' ? ' (record one with hotpath run --heap)' : ''}; profiles: ${has}`,
      { details: { dir: run.dir } },
    );
  }
  let pool = all;
  if (thread !== undefined) {
    const want = parseThread(thread);
    pool = all.filter((p) => p.pid === want.pid && (want.threadId < 0 || p.threadId === want.threadId));
    if (pool.length === 0)
      throw hotpathError('HOTPATH_ERR_NO_PROFILE', `No ${kind} profile for thread ${thread}; profiles: ${all.map(describe).join(', ')}`, {
        details: { dir: run.dir },
      });
  } else {
    const targets = all.filter((p) => run.meta.processes.some((x) => x.pid === p.pid && x.threadId === p.threadId && x.isTarget));
    if (targets.length > 0) pool = targets;
  }
  const chosen = [...pool].sort((a, b) => b.end - b.start - (a.end - a.start))[0];
  return { chosen, others: all.filter((p) => p !== chosen) };
}

/** The profile's samples, from the run's one read of it (HOTPATH_ERR_PROFILE when it cannot be read or parsed). */
function samplesOf(run: RunData, ref: ProfileRef): StackSamples {
  if (ref.kind === 'heap') return treeStackSamples(buildHeapTree(runHeapProfile(run, ref), { cwd: run.cwd, resolver: runResolver(run) }));
  return cpuStackSamples(runCpuProfile(run, ref), { cwd: run.cwd, resolver: runResolver(run) });
}

function render(format: ExportFormat, samples: StackSamples, ref: ProfileRef, exporter: string): string | Buffer | Iterable<string> {
  const name = `${ref.kind} ${ref.pid}:${ref.threadId}`;
  if (format === 'pprof')
    return toPprof(samples, { startEpochMs: ref.kind === 'cpu' && ref.start > 0 ? ref.start : undefined, comments: [exporter, name] });
  if (format === 'speedscope') return JSON.stringify(toSpeedscope(samples, { name, exporter }));
  return foldedChunks(samples);
}

export async function exportProfile(run: RunData, options: ExportOptions): Promise<ExportResult> {
  const { chosen, others } = chooseProfile(run, options.heap ? 'heap' : 'cpu', options.thread);
  const base = chosen.path.replace(/\.(cpuprofile|heapprofile)$/, '');
  const out = options.out ? resolve(options.out) : `${base}${extensions[options.format]}`;
  await mkdir(dirname(out), { recursive: true });
  const samples = samplesOf(run, chosen); // validates the file before handing it out
  if (options.format === 'cpuprofile') {
    // The original file, byte for byte (the parsed profile has its inlined frames expanded).
    if (out !== resolve(chosen.path)) await write(out, readProfileFile(chosen.path));
    return { path: out, profile: chosen, others, total: samples.total };
  }
  await write(out, render(options.format, samples, chosen, options.exporter ?? 'hotpath'));
  return { path: out, profile: chosen, others, total: samples.total };
}

/** Written beside, then renamed over, `out`: a symbolic link planted under that name in a run directory is replaced, not followed. */
async function write(out: string, data: string | Uint8Array | Iterable<string>): Promise<void> {
  await writeFilesAtomically([{ path: out, data }]).catch((cause: Error) => {
    throw hotpathError('HOTPATH_ERR_INVALID_OPTION', `Cannot write ${out}: ${cause.message}`, { cause, details: { out } });
  });
}
