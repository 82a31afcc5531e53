// Writes a comparison into the after run directory: compare.json (the comparison), compare.md
// (the pull-request summary) and compare.html (the offline page with the differential flame
// graph, docs/compare.md). Returns the Markdown.

import { join } from 'node:path';
import type { Comparison, DiffTree } from '../report/compare-schema.js';
import { renderCompareMarkdown } from './render-compare-md.js';
import { renderCompareHtml } from '../report/html/render-compare-html.js';
import { writeFilesAtomically } from '../report/write-atomic.js';

export async function writeComparison(c: Comparison, diff?: DiffTree): Promise<string> {
  const md = renderCompareMarkdown(c);
  await writeFilesAtomically([
    { path: join(c.after.runDir, 'compare.json'), data: JSON.stringify(c, null, 2) + '\n' },
    { path: join(c.after.runDir, 'compare.md'), data: md },
    { path: join(c.after.runDir, 'compare.html'), data: renderCompareHtml(c, diff) },
  ]);
  return md;
}
