// Writes a run directory's reports: report.json, report.html (the offline UI) and
// report.md (a summary for pull requests and CI logs), all or none. Called at the end of every `hotpath run` and by
// `hotpath report <dir>`; returns the Report so the caller can print it.

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunData } from '../run-dir/run-data.js';
import type { Report } from './report-schema.js';
import { buildReport } from './build-report.js';
import { readRunDir } from '../profile/read-run.js';
import { buildPayload, renderReportHtml } from './html/write-report-html.js';
import { writeFilesAtomically, type FileToWrite } from './write-atomic.js';
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
  // All three describe one diagnosis: rendered first, then written together (write-atomic.ts),
  // so a failure never leaves a new report.json beside a stale report.html.
  const files: FileToWrite[] = [{ path: join(runDir, 'report.json'), data: JSON.stringify(report, null, 2) + '\n' }];
  if (options.markdown !== false) files.push({ path: join(runDir, 'report.md'), data: renderReportMarkdown(report) });
  let htmlError: unknown;
  if (options.html !== false) {
    try {
      files.push({ path: join(runDir, 'report.html'), data: renderReportHtml(await buildPayload(run, report)) });
    } catch (err) {
      htmlError = err;
    }
  }
  await writeFilesAtomically(files);
  if (htmlError !== undefined) {
    // The diagnosis is kept in the other two; a report.html of an earlier diagnosis would contradict them.
    await rm(join(runDir, 'report.html'), { force: true });
    throw htmlError;
  }
  return report;
}
