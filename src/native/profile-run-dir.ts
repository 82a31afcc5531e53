// A run directory made of CPU profiles alone, as `hotpath prof` and `hotpath import` write
// them (no agent, no load): meta.json and the profiles, then report.json/html/md and the
// pprof, speedscope and folded exports by the run's own code. Loaded only when reports are
// written (prof-run.ts imports it lazily: `hotpath prof --no-report` needs none of this).

import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createRunDir } from '../run-dir/create-run-dir.js';
import { RUN_DIR_VERSION, RUN_FILES, profileFileName, type RunMeta } from '../run-dir/schema.js';
import { readRunDir } from '../profile/read-run.js';
import { writeReports } from '../report/write-reports.js';
import { exportProfile, type ExportFormat } from '../report/export/export-profile.js';
import type { Report } from '../report/report-schema.js';
import { hotpathVersion } from '../hotpath-version.js';
import { urlToPath } from '../profile/classify-frame.js';
import type { CpuProfile } from '../profile/cpu-profile.js';

/**
 * The app's directory: the working directory when the log ran files under it, else the
 * directory of the first script the log ran (the main module).
 */
export function appDirectory(profiles: readonly CpuProfile[], cwd: string): string {
  const paths: string[] = [];
  for (const p of profiles) {
    for (const n of p.nodes) {
      const p = n.callFrame.url ? urlToPath(n.callFrame.url) : undefined;
      if (p && !p.includes('/node_modules/')) paths.push(p);
    }
  }
  if (paths.length === 0 || paths.some((p) => p.startsWith(cwd.endsWith('/') ? cwd : cwd + '/'))) return cwd;
  const main = profiles
    .flatMap((p) => p.nodes)
    .find((n) => n.callFrame.url.startsWith('file:') && n.callFrame.lineNumber === 0 && n.callFrame.columnNumber === 0);
  const mainPath = main ? urlToPath(main.callFrame.url) : undefined;
  return mainPath ? dirname(mainPath) : dirname(paths[0]);
}

const EXPORTS: ExportFormat[] = ['pprof', 'speedscope', 'folded'];

export interface NativeProfile {
  pid: number;
  profile: CpuProfile;
  /** Epoch ms of the profile's first and last sample. */
  start: number;
  end: number;
}

export interface ProfileRunDirSpec {
  out: string;
  /** Words the run directory is named after. */
  name: string[];
  command: string[];
  cwd: string;
  nodeVersion?: string;
  options: Record<string, unknown>;
  warnings: string[];
  profiles: NativeProfile[];
  /** Other files to write into the directory (name → text). */
  extraFiles?: Record<string, string>;
}

/**
 * A run directory made of CPU profiles alone (no agent, no load): meta.json, the profiles,
 * then report.json/html/md and the pprof, speedscope and folded exports, by the run's code.
 */
export async function writeProfileRunDir(spec: ProfileRunDirSpec): Promise<{ dir: string; report: Report; exports: string[] }> {
  const dir = await createRunDir(spec.out, spec.name);
  // Profiles of one process (worker threads) get thread ids in order.
  const perPid = new Map<number, number>();
  const profiles: RunMeta['profiles'] = [];
  for (const p of spec.profiles) {
    const threadId = perPid.get(p.pid) ?? 0;
    perPid.set(p.pid, threadId + 1);
    const file = profileFileName('cpu', p.pid, threadId);
    await writeFile(join(dir, file), JSON.stringify(p.profile));
    profiles.push({ kind: 'cpu', pid: p.pid, threadId, file, start: p.start, end: p.end });
  }
  const meta: RunMeta = {
    version: RUN_DIR_VERSION,
    hotpathVersion: hotpathVersion(),
    command: spec.command,
    cwd: spec.cwd,
    ...(spec.nodeVersion ? { nodeVersion: spec.nodeVersion } : {}),
    startedAt: Math.min(...profiles.map((p) => p.start)),
    endedAt: Math.max(...profiles.map((p) => p.end)),
    phases: [],
    processes: profiles.map((p) => ({ pid: p.pid, threadId: p.threadId, isTarget: true })),
    outcome: { status: 'completed' },
    options: spec.options,
    profiles,
    ...(spec.warnings.length > 0 ? { warnings: spec.warnings } : {}),
  };
  await writeFile(join(dir, RUN_FILES.meta), JSON.stringify(meta, null, 2) + '\n');
  for (const [name, text] of Object.entries(spec.extraFiles ?? {})) await writeFile(join(dir, name), text);
  const run = await readRunDir(dir);
  const report = await writeReports(dir, { run });
  const exports: string[] = [];
  for (const p of profiles) {
    for (const format of EXPORTS) {
      const e = await exportProfile(run, {
        format,
        thread: `${p.pid}:${p.threadId}`,
        exporter: `hotpath ${meta.hotpathVersion} ${spec.command[1] ?? ''}`.trim(),
      });
      exports.push(e.path);
    }
  }
  return { dir, report, exports };
}
