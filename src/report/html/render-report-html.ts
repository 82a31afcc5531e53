// Fills the report page: the prebuilt UI script and styles inlined, the run's data as
// gzip + base64 in an inert element, and a Content-Security-Policy that forbids every
// network request and lets only the UI's own script (pinned by its hash) run.

import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { loadReportAssets, type ReportAssets } from './report-assets.js';
import type { ReportPayload } from './report-payload.js';

/** Must match DATA_ELEMENT_ID in src/report/ui/decode-payload.ts. */
export const DATA_ELEMENT_ID = 'hotpath-data';

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Inline code must not contain its own closing tag, nor `<!--` (which changes how a script
 * element is parsed); `<\/` and `<\!` mean the same inside JS strings and regexes.
 */
function inlineSafe(code: string, tag: 'script' | 'style'): string {
  return code.replace(new RegExp(`</(${tag})`, 'gi'), '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** The payload, compressed: base64's alphabet cannot close the element it sits in. */
export function encodePayload(payload: ReportPayload | object): string {
  // zlib's default level: level 9 is a few % smaller and several times slower on big profiles.
  return gzipSync(JSON.stringify(payload)).toString('base64');
}

export function contentSecurityPolicy(script: string): string {
  const hash = createHash('sha256').update(script, 'utf8').digest('base64');
  return [
    "default-src 'none'",
    `script-src 'sha256-${hash}'`,
    "style-src 'unsafe-inline'",
    'img-src data:',
    'font-src data:',
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

export function renderReportHtml(payload: ReportPayload, assets: ReportAssets = loadReportAssets()): string {
  const title = `hotpath: ${payload.run.command.join(' ') || payload.run.url || payload.run.dir}`;
  return renderPage(
    title,
    encodePayload(payload),
    assets,
    'This report needs JavaScript: it draws its charts and flame graphs in the page, offline.',
  );
}

/** One offline page: a prebuilt UI inlined, its data embedded, everything else forbidden. */
export function renderPage(rawTitle: string, data: string, assets: ReportAssets, noscript: string): string {
  const script = inlineSafe(assets.script, 'script');
  const style = inlineSafe(assets.style, 'style');
  const title = rawTitle.length > 120 ? `${rawTitle.slice(0, 117)}…` : rawTitle;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(script))}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>
<body>
<div id="app"><p>Loading the report…</p><noscript>${escapeHtml(noscript)}</noscript></div>
<script type="application/x-hotpath-data+gzip;base64" id="${DATA_ELEMENT_ID}">${data}</script>
<script>${script}</script>
</body>
</html>
`;
}
