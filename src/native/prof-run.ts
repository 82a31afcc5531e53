// `hotpath prof`: V8 tick logs into a run directory like `hotpath run` writes: one CPU profile
// per isolate (converted by ticks-to-cpuprofile.ts), meta.json, the `--prof-process` text
// (prof.txt) and figures (prof.json), then report.html, report.md and every export format,
// written by the same code as a run's. Several logs are read at once, one worker thread each.

import { statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { hotpathError, type ErrorCode } from '../errors.js';
import type { Report } from '../report/report-schema.js';
import { analyzeTickLog, type TickLogAnalysis } from './analyze-tick-log.js';
import { formatProfStatistics } from './prof-statistics.js';

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
  // The report writers load only now: --no-report needs none of them.
  const { appDirectory, writeProfileRunDir } = await import('./profile-run-dir.js');
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
