// Writes report.html into a run directory: the run and its diagnosis gathered into the
// embedded payload, inlined with the prebuilt UI into one offline file.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunData } from '../../run-dir/run-data.js';
import type { Report } from '../report-schema.js';
import { buildPayload, type BuildPayloadOptions } from './build-payload.js';
import { renderReportHtml } from './render-report-html.js';

export { renderReportHtml } from './render-report-html.js';
export { buildPayload } from './build-payload.js';

export interface WriteReportHtmlOptions extends BuildPayloadOptions {
  /** Where to write (default: report.html in the run directory). */
  path?: string;
}

/** Writes report.html and returns its path. */
export async function writeReportHtml(run: RunData, report: Report, options: WriteReportHtmlOptions = {}): Promise<string> {
  const path = options.path ?? join(run.dir, 'report.html');
  const html = renderReportHtml(await buildPayload(run, report, options));
  await writeFile(path, html, { mode: 0o600 });
  return path;
}
