// Writes a run directory's reports: report.json always, then report.html and report.md
// when their renderers are present. Called at the end of every `hotpath run` and by
// `hotpath report <dir>`; returns the Report so the caller can print it.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunData } from '../run-dir/run-data.js';
import type { Report } from './report-schema.js';
import { buildReport } from './build-report.js';

export interface WriteReportsOptions {
  /** Write report.html (default true). */
  html?: boolean;
  /** Write report.md (default true). */
  markdown?: boolean;
  /** An already read run (skips reading the directory again). */
  run?: RunData;
}

export async function writeReports(runDir: string, options: WriteReportsOptions = {}): Promise<Report> {
  const run = options.run ?? (await readRun(runDir));
  const report = buildReport(run);
  await writeFile(join(runDir, 'report.json'), JSON.stringify(report, null, 2) + '\n');
  if (options.html !== false) await writeHtml(run, report);
  if (options.markdown !== false) await writeMarkdown(runDir, report);
  return report;
}

// The reader and the two renderers belong to other modules that land separately; they are
// loaded by name so this file builds before they exist and uses them as soon as they do.
type Loaded<T> = T | undefined;

async function optionalImport<T>(specifier: string): Promise<Loaded<T>> {
  try {
    return (await import(specifier)) as T;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes(specifier.replace('./', '').replace('../', ''))) return undefined;
    throw err;
  }
}

async function readRun(runDir: string): Promise<RunData> {
  const mod = await optionalImport<{ readRunDir(dir: string): Promise<RunData> }>('../run-dir/read-run-dir.js');
  if (!mod) throw new Error('the run-directory reader (src/run-dir/read-run-dir.ts) is not built');
  return mod.readRunDir(runDir);
}

async function writeHtml(run: RunData, report: Report): Promise<void> {
  const mod = await optionalImport<{ writeReportHtml(run: RunData, report: Report): Promise<unknown> }>('./html/write-report-html.js');
  if (mod) await mod.writeReportHtml(run, report);
}

async function writeMarkdown(runDir: string, report: Report): Promise<void> {
  const mod = await optionalImport<{ renderReportMarkdown(report: Report): string }>('./export/report-md.js');
  if (mod) await writeFile(join(runDir, 'report.md'), mod.renderReportMarkdown(report));
}
