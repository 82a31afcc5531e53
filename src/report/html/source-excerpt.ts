// Reads a few lines of a culprit's source when the report is written, so the report shows
// the code a finding points at even on another machine. Bounded: large or unreadable files
// give no excerpt.

import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { SourceExcerpt } from './report-payload.js';

/** Lines shown before and after the culprit line. */
export const EXCERPT_CONTEXT = 3;
/** Files larger than this are not read (a bundle or generated file is no help to read). */
export const EXCERPT_MAX_FILE_BYTES = 4 * 1024 * 1024;
/** Long lines (minified code) are cut. */
export const EXCERPT_MAX_LINE = 240;

export async function readExcerpt(cwd: string, file: string, line: number): Promise<SourceExcerpt | undefined> {
  if (!file || line < 1 || file.startsWith('node:')) return undefined;
  const path = isAbsolute(file) ? file : join(cwd, file);
  try {
    // A regular file only: a culprit path naming a FIFO or a device must not hang the report.
    const st = await stat(path);
    if (!st.isFile() || st.size > EXCERPT_MAX_FILE_BYTES) return undefined;
    const lines = (await readFile(path, 'utf8')).split(/\r?\n/);
    if (line > lines.length) return undefined;
    const first = Math.max(1, line - EXCERPT_CONTEXT);
    const last = Math.min(lines.length, line + EXCERPT_CONTEXT);
    const cut = lines.slice(first - 1, last).map((l) => (l.length > EXCERPT_MAX_LINE ? `${l.slice(0, EXCERPT_MAX_LINE)}…` : l));
    return { file, firstLine: first, line, lines: cut };
  } catch {
    return undefined;
  }
}
