// A module loaded again and again: an ES module is cached by its URL, query included, so
// `import(\`./template.mjs?v=${Date.now()}\`)` (cache busting, to "always get the latest") loads
// and evaluates the file once more per call, and the loader keeps every module it loaded for the
// life of the process. The heap then grows with what each copy's top level allocates, charged to
// that top level (`(anonymous)` at `template.mjs?v=1389`), while the function that imports is
// nowhere on its stack (the import resolves later). The scripts' URLs show the same file under
// many queries; the app's source shows where `import(` is called.

import { readFileSync } from 'node:fs';
import type { RunData } from '../../run-dir/run-data.js';
import type { Culprit } from '../finding.js';
import { urlToPath } from '../../profile/classify-frame.js';
import { scriptFunctions } from '../../profile/script-functions.js';
import { relativeFile } from './culprit.js';

/** One file seen under at least this many URLs (a query or fragment per import) is reloaded. */
export const RELOADED_MODULE_MIN_URLS = 3;

export interface ReloadedModule {
  /** The module's path (without the query), relative to the target's cwd. */
  file: string;
  /** Distinct URLs the scripts the agent saw load it under (a lower bound: sampled scripts only). */
  urls: number;
  /** The app function that calls `import(` with a changing specifier, and that line (1-based). */
  importer?: Culprit;
}

const DYNAMIC_IMPORT = /\bimport\s*\(/;
const withoutQuery = (url: string): string => url.replace(/[?#].*$/, '');

/** The module reloaded the most, when one file was seen under RELOADED_MODULE_MIN_URLS URLs or more. */
export function reloadedModule(run: RunData): ReloadedModule | undefined {
  const urls = new Set<string>([...Object.values(run.scriptUrls ?? {}), ...Object.keys(run.functionRanges ?? {})]);
  const byFile = new Map<string, Set<string>>();
  for (const url of urls) {
    if (!/[?#]/.test(url) || !url.startsWith('file:')) continue;
    const file = withoutQuery(url);
    byFile.set(file, (byFile.get(file) ?? new Set()).add(url));
  }
  const [fileUrl, seen] = [...byFile].sort((a, b) => b[1].size - a[1].size)[0] ?? [];
  if (!fileUrl || !seen || seen.size < RELOADED_MODULE_MIN_URLS) return undefined;
  const path = urlToPath(fileUrl) ?? fileUrl;
  const importer = importerOf(run, path);
  return { file: relativeFile(path, run.cwd), urls: seen.size, ...(importer ? { importer } : {}) };
}

/**
 * The app function holding a dynamic `import(` line, among the app scripts V8 reported functions
 * for: the line naming the module's file first, else the only such line.
 */
function importerOf(run: RunData, modulePath: string): Culprit | undefined {
  const base = (modulePath.split(/[\\/]/).pop() ?? '').replace(/\.[cm]?[jt]sx?$/, '');
  const found: { culprit: Culprit; named: boolean }[] = [];
  for (const url of Object.keys(run.functionRanges ?? {})) {
    const path = urlToPath(url);
    if (!path || /[?#]/.test(url) || /[\\/]node_modules[\\/]/.test(path)) continue;
    let lines: string[];
    try {
      lines = readFileSync(path, 'utf8').split('\n');
    } catch {
      continue;
    }
    const fns = scriptFunctions(run.functionRanges, url);
    lines.forEach((text, i) => {
      const m = DYNAMIC_IMPORT.exec(text.replace(/\/\/.*$/, ''));
      if (!m) return;
      const fn = fns?.at(i, m.index);
      if (!fn || fn.name === '') return;
      found.push({
        culprit: { function: fn.name, file: relativeFile(path, run.cwd), line: i + 1 },
        named: base !== '' && text.includes(base),
      });
    });
  }
  return (found.find((f) => f.named) ?? (found.length === 1 ? found[0] : undefined))?.culprit;
}
