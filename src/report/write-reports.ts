// Writes a run directory's reports: report.json always, then report.html and report.md
// when their renderers are present. Called at the end of every `hotpath run` and by
// `hotpath report <dir>`; returns the Report so the caller can print it.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunData } from '../run-dir/run-data.js';
import type { Report } from './report-schema.js';
import { buildReport } from './build-report.js';
import { readRunDir } from '../run-dir/read-run-dir.js';
import { writeReportHtml } from './html/write-report-html.js';

export interface WriteReportsOptions {
  /** Write report.html (default true). */
  html?: boolean;
  /** Write report.md (default true). */
  markdown?: boolean;
  /** An already read run (skips reading the directory again). */
  run?: RunData;
}

export async function writeReports(runDir: string, options: WriteReportsOptions = {}): Promise<Report> {
  const run = options.run ?? (await readRunDir(runDir));
  const report = buildReport(run);
  await writeFile(join(runDir, 'report.json'), JSON.stringify(report, null, 2) + '\n');
  if (options.html !== false) await writeReportHtml(run, report);
  if (options.markdown !== false) await writeMarkdown(runDir, report);
  return report;
}

// The Markdown export lands separately; it is loaded by name so this file builds before it
// exists and uses it as soon as it does.
async function optionalImport<T>(specifier: string): Promise<T | undefined> {
  try {
    return (await import(specifier)) as T;
  } catch (err) {
    const missing = (err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes(specifier.replace(/^\.\.?\//, ''));
    if (missing) return undefined;
    throw err;
  }
}

async function writeMarkdown(runDir: string, report: Report): Promise<void> {
  const mod = await optionalImport<{ renderReportMarkdown(report: Report): string }>('./export/report-md.js');
  if (mod) await writeFile(join(runDir, 'report.md'), mod.renderReportMarkdown(report));
}
