// compare.html: the comparison of two runs and their differential flame graph, as one offline
// page built like report.html (the prebuilt compare UI inlined, the data gzip + base64, a
// Content-Security-Policy that forbids every request).

import type { Comparison } from '../compare-schema.js';
import type { DiffTree } from '../compare-schema.js';
import { hotpathVersion } from '../../hotpath-version.js';
import { COMPARE_PAYLOAD_VERSION, type ComparePayload } from './compare-payload.js';
import { loadUiAssets, type ReportAssets } from './report-assets.js';
import { encodePayload, renderPage } from './render-report-html.js';

export function comparePayload(c: Comparison, diff?: DiffTree): ComparePayload {
  return {
    version: COMPARE_PAYLOAD_VERSION,
    kind: 'compare',
    generatedAt: Date.now(),
    hotpathVersion: hotpathVersion(),
    comparison: c,
    ...(diff ? { diff } : {}),
  };
}

export function renderCompareHtml(c: Comparison, diff?: DiffTree, assets: ReportAssets = loadUiAssets('compare')): string {
  const name = (cmd: string[], dir: string) => cmd.join(' ') || dir;
  return renderPage(
    `hotpath compare: ${name(c.before.command, c.before.runDir)} → ${name(c.after.command, c.after.runDir)}`,
    encodePayload(comparePayload(c, diff)),
    assets,
    'This comparison needs JavaScript: it draws its differential flame graph in the page, offline.',
  );
}
