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
import { readRunDir } from '../run-dir/read-run-dir.js';
import { writeReports } from '../report/write-reports.js';
import { exportProfile, type ExportFormat } from '../report/export/export-profile.js';
import type { Report } from '../report/report-schema.js';
import { hotpathVersion } from '../run/hotpath-version.js';
import { analyzeTickLog, type TickLogAnalysis } from './analyze-tick-log.js';
import { formatProfStatistics } from './prof-statistics.js';
import { urlToPath } from '../profile/classify-frame.js';

export interface ProfRunOptions {
  /** Where run directories are created (default `.hotpath`). */
  out?: string;
  /** The working directory: app frames are the files under it. */
  cwd: string;
  /** Skip report.html/report.md/exports (tests of the text alone). */
  reports?: boolean;
}

export interface ProfRunResult {
  dir: string;
  analyses: TickLogAnalysis[];
  /** The `--prof-process` text of every log, one after another. */
  text: string;
  report?: Report;
  exports: string[];
  warnings: string[];
}

/** Analyzes the logs, in worker threads when there are several. */
export async function analyzeTickLogs(files: readonly string[]): Promise<TickLogAnalysis[]> {
  if (files.length === 1) return [await analyzeTickLog(files[0])];
  return Promise.all(files.map((file) => new Promise<TickLogAnalysis>((ok, fail) => {
    const worker = new Worker(new URL('./tick-log-worker.js', import.meta.url), { workerData: { file } });
    worker.once('message', (m: { result?: TickLogAnalysis; error?: { code?: string; message: string; details?: Record<string, unknown> } }) => {
      if (m.result) ok(m.result);
      else if (m.error?.code?.startsWith('HOTPATH_ERR_')) fail(hotpathError(m.error.code as ErrorCode, m.error.message, { details: m.error.details }));
      else fail(new Error(m.error?.message ?? 'the tick log worker failed'));
      void worker.terminate();
    });
    worker.once('error', fail);
  })));
}

/**
 * The app's directory: the working directory when the log ran files under it, else the
 * directory of the first script the log ran (the main module).
 */
export function appDirectory(analyses: readonly TickLogAnalysis[], cwd: string): string {
  const paths: string[] = [];
  for (const a of analyses) {
    for (const n of a.profile.nodes) {
      const p = n.callFrame.url ? urlToPath(n.callFrame.url) : undefined;
      if (p && !p.includes('/node_modules/')) paths.push(p);
    }
  }
  if (paths.length === 0 || paths.some((p) => p.startsWith(cwd.endsWith('/') ? cwd : cwd + '/'))) return cwd;
  const main = analyses.flatMap((a) => a.profile.nodes).find((n) => n.callFrame.url.startsWith('file:') && n.callFrame.lineNumber === 0 && n.callFrame.columnNumber === 0);
  const mainPath = main ? urlToPath(main.callFrame.url) : undefined;
  return mainPath ? dirname(mainPath) : dirname(paths[0]);
}

const EXPORTS: ExportFormat[] = ['pprof', 'speedscope', 'folded'];

export async function profRun(files: readonly string[], options: ProfRunOptions): Promise<ProfRunResult> {
  const abs = files.map((f) => resolve(options.cwd, f));
  const analyses = await analyzeTickLogs(abs);
  const dir = await createRunDir(resolve(options.cwd, options.out ?? '.hotpath'), ['prof', ...abs.map((f) => basename(f))]);
  const warnings = analyses.flatMap((a) => a.statistics.warnings);
  for (const a of analyses) {
    if (a.statistics.unaccounted > 0) {
      const why = a.statistics.unresolved.map((u) => `${u.ticks} ${u.reason}`).join('; ');
      warnings.push(`${basename(a.file)}: ${a.statistics.unaccounted} of ${a.statistics.ticks} ticks (${((a.statistics.unaccounted * 100) / a.statistics.ticks).toFixed(1)} %) could not be named: ${why}`);
    }
  }
  // Isolates of one process (worker threads) get thread ids in the order given.
  const perPid = new Map<number, number>();
  const threads = analyses.map((a) => {
    const tid = perPid.get(a.pid) ?? 0;
    perPid.set(a.pid, tid + 1);
    return tid;
  });
  const profiles: RunMeta['profiles'] = [];
  let startedAt = Infinity;
  let endedAt = 0;
  for (const [i, a] of analyses.entries()) {
    const mtime = statSync(a.file).mtimeMs;
    // The log is written to the end of the process: its mtime is about the last tick.
    const start = mtime - (a.lastTickUs - a.firstTickUs) / 1000;
    startedAt = Math.min(startedAt, start - a.firstTickUs / 1000);
    endedAt = Math.max(endedAt, mtime);
    const file = profileFileName('cpu', a.pid, threads[i]);
    await writeFile(join(dir, file), JSON.stringify(a.profile));
    profiles.push({ kind: 'cpu', pid: a.pid, threadId: threads[i], file, start, end: mtime });
  }
  const texts = analyses.map((a) => formatProfStatistics(a.statistics, basename(a.file)));
  const text = texts.join('\n');
  const meta: RunMeta = {
    version: RUN_DIR_VERSION,
    hotpathVersion: hotpathVersion(),
    command: ['hotpath', 'prof', ...abs],
    cwd: appDirectory(analyses, options.cwd),
    ...(analyses[0].statistics.v8Version ? { nodeVersion: `V8 ${analyses[0].statistics.v8Version}` } : {}),
    startedAt: Number.isFinite(startedAt) ? startedAt : Date.now(),
    endedAt,
    phases: [],
    processes: analyses.map((a, i) => ({ pid: a.pid, threadId: threads[i], isTarget: true })),
    outcome: { status: 'completed' },
    options: { prof: abs },
    profiles,
    ...(warnings.length > 0 ? { warnings } : {}),
  };
  await writeFile(join(dir, RUN_FILES.meta), JSON.stringify(meta, null, 2) + '\n');
  await writeFile(join(dir, 'prof.txt'), text);
  await writeFile(join(dir, 'prof.json'), JSON.stringify(analyses.map((a) => a.statistics), null, 2) + '\n');
  const result: ProfRunResult = { dir, analyses, text, exports: [], warnings };
  if (options.reports === false) return result;
  const run = await readRunDir(dir);
  result.report = await writeReports(dir, { run });
  for (const p of profiles) {
    for (const format of EXPORTS) {
      const e = await exportProfile(run, { format, thread: `${p.pid}:${p.threadId}`, exporter: `hotpath ${meta.hotpathVersion} prof` });
      result.exports.push(e.path);
    }
  }
  return result;
}

/** Checks the arguments before any work: every log exists and is a file. */
export function checkTickLogFiles(files: readonly string[], cwd: string): void {
  for (const f of files) {
    let isFile = false;
    try { isFile = statSync(resolve(cwd, f)).isFile(); } catch { isFile = false; }
    if (!isFile) {
      throw hotpathError('HOTPATH_ERR_TICK_LOG', `Cannot read the tick log ${f}: no such file`, { details: { file: f } });
    }
  }
}
