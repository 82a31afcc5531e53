// Writes a run directory's reports: report.json, then report.html (the offline UI) and
// report.md (a summary for pull requests and CI logs). Called at the end of every `hotpath run` and by
// `hotpath report <dir>`; returns the Report so the caller can print it.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunData } from '../run-dir/run-data.js';
import type { Report } from './report-schema.js';
import { buildReport } from './build-report.js';
import { readRunDir } from '../run-dir/read-run-dir.js';
import { writeReportHtml } from './html/write-report-html.js';
import { renderReportMarkdown } from './export/report-md.js';

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
  await writeFile(join(runDir, 'report.json'), JSON.stringify(report, null, 2) + '\n', { mode: 0o600 });
  // Cheapest and most certain first: a failing HTML build must not cost the other two.
  if (options.markdown !== false) await writeMarkdown(runDir, report);
  if (options.html !== false) await writeReportHtml(run, report);
  return report;
}

async function writeMarkdown(runDir: string, report: Report): Promise<void> {
  await writeFile(join(runDir, 'report.md'), renderReportMarkdown(report), { mode: 0o600 });
}
