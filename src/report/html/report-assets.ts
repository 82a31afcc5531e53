// The prebuilt report UI (bundled by scripts/build.mjs into dist/report-ui when the package
// is built): read once per process and inlined into every report.html.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { hotpathError } from '../../errors.js';

export interface ReportAssets {
  script: string;
  style: string;
}

// This file runs from dist/src/report/html/; the UI bundle sits in dist/report-ui/.
const UI_DIR = new URL('../../../report-ui/', import.meta.url);
const cached = new Map<string, ReportAssets>();

/** A page's prebuilt UI: `<name>.js` and `<name>.css` in dist/report-ui (report, compare). */
export function loadUiAssets(name: 'report' | 'compare'): ReportAssets {
  const hit = cached.get(name);
  if (hit) return hit;
  let assets: ReportAssets;
  try {
    assets = {
      script: readFileSync(new URL(`${name}.js`, UI_DIR), 'utf8'),
      style: readFileSync(new URL(`${name}.css`, UI_DIR), 'utf8'),
    };
  } catch (cause) {
    throw hotpathError(
      'HOTPATH_ERR_REPORT_UI',
      `The report UI bundle is missing from ${fileURLToPath(UI_DIR)}; build the package (npm run build)`,
      { cause },
    );
  }
  cached.set(name, assets);
  return assets;
}

export function loadReportAssets(): ReportAssets {
  return loadUiAssets('report');
}
