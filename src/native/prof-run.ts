// `hotpath prof`: V8 tick logs into a run directory like `hotpath run` writes: one CPU profile
// per isolate (converted by ticks-to-cpuprofile.ts), meta.json, the `--prof-process` text
// (prof.txt) and figures (prof.json), then report.html, report.md and every export format,
// written by the same code as a run's. Several logs are read at once, one worker thread each.

import { statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { hotpathError, type ErrorCode } from '../errors.js';
import { createRunDir } from '../run-dir/create-run-dir.js';
import { RUN_DIR_VERSION, RUN_FILES, profileFileName, type RunMeta } from '../run-dir/schema.js';
import { readRunDir } from '../profile/read-run.js';
import { writeReports } from '../report/write-reports.js';
import { exportProfile, type ExportFormat } from '../report/export/export-profile.js';
import type { Report } from '../report/report-schema.js';
import { hotpathVersion } from '../hotpath-version.js';
import { analyzeTickLog, type TickLogAnalysis } from './analyze-tick-log.js';
import { formatProfStatistics } from './prof-statistics.js';
import { urlToPath } from '../profile/classify-frame.js';
import type { CpuProfile } from '../profile/cpu-profile.js';

export interface ProfRunOptions {
  /** Where run directories are created (default `.hotpath`). */
  out?: string;
  /** The working directory: app frames are the files under it. */
  cwd: string;
  /** false: compute and return the figures only, write no run directory. */
  reports?: boolean;
}

export interface ProfRunResult {
  /** The run directory (none with `reports: false`). */
  dir?: string;
  analyses: TickLogAnalysis[];
  /** The `--prof-process` text of every log, one after another. */
  text: string;
  report?: Report;
  exports: string[];
  warnings: string[];
}

/** Analyzes the logs, in worker threads when there are several. */
export async function analyzeTickLogs(files: readonly string[], profile = true): Promise<TickLogAnalysis[]> {
  if (files.length === 1) return [await analyzeTickLog(files[0], { profile })];
  return Promise.all(
    files.map(
      (file) =>
        new Promise<TickLogAnalysis>((ok, fail) => {
          const worker = new Worker(new URL('./tick-log-worker.js', import.meta.url), { workerData: { file, profile } });
          worker.once(
            'message',
            (m: { result?: TickLogAnalysis; error?: { code?: string; message: string; details?: Record<string, unknown> } }) => {
              if (m.result) ok(m.result);
              else if (m.error?.code?.startsWith('HOTPATH_ERR_'))
                fail(hotpathError(m.error.code as ErrorCode, m.error.message, { details: m.error.details }));
              else fail(new Error(m.error?.message ?? 'the tick log worker failed'));
              void worker.terminate();
            },
          );
          worker.once('error', fail);
        }),
    ),
  );
}

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

export async function profRun(files: readonly string[], options: ProfRunOptions): Promise<ProfRunResult> {
  const abs = files.map((f) => resolve(options.cwd, f));
  const analyses = await analyzeTickLogs(abs, options.reports !== false);
  const warnings = analyses.flatMap((a) => a.statistics.warnings);
  for (const a of analyses) {
    if (a.statistics.unaccounted > 0) {
      const why = a.statistics.unresolved.map((u) => `${u.ticks} ${u.reason}`).join('; ');
      warnings.push(
        `${basename(a.file)}: ${a.statistics.unaccounted} of ${a.statistics.ticks} ticks (${((a.statistics.unaccounted * 100) / a.statistics.ticks).toFixed(1)} %) could not be named: ${why}`,
      );
    }
  }
  const texts = analyses.map((a) => formatProfStatistics(a.statistics, basename(a.file)));
  const text = texts.join('\n');
  if (options.reports === false) return { analyses, text, exports: [], warnings };
  const result = await writeProfileRunDir({
    out: resolve(options.cwd, options.out ?? '.hotpath'),
    name: ['prof', ...abs.map((f) => basename(f))],
    command: ['hotpath', 'prof', ...abs],
    cwd: appDirectory(
      analyses.map((a) => a.profile),
      options.cwd,
    ),
    ...(analyses[0].statistics.v8Version ? { nodeVersion: `V8 ${analyses[0].statistics.v8Version}` } : {}),
    options: { prof: abs },
    warnings,
    profiles: analyses.map((a) => {
      // The log is written to the end of the process: its mtime is about the last tick.
      const end = statSync(a.file).mtimeMs;
      return { pid: a.pid, profile: a.profile, start: end - (a.lastTickUs - a.firstTickUs) / 1000, end };
    }),
    extraFiles: {
      'prof.txt': text,
      'prof.json':
        JSON.stringify(
          analyses.map((a) => a.statistics),
          null,
          2,
        ) + '\n',
    },
  });
  return { ...result, analyses, text, warnings };
}

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

/** Checks the arguments before any work: every log exists and is a file. */
export function checkTickLogFiles(files: readonly string[], cwd: string): void {
  for (const f of files) {
    let isFile: boolean;
    try {
      isFile = statSync(resolve(cwd, f)).isFile();
    } catch {
      isFile = false;
    }
    if (!isFile) {
      throw hotpathError('HOTPATH_ERR_TICK_LOG', `Cannot read the tick log ${f}: no such file`, { details: { file: f } });
    }
  }
}
