// hotpath's own version, for `--version`, the help and every run directory (read once from
// package.json, which sits two levels above this file once built: dist/src/).

import { readFileSync } from 'node:fs';

let cached: string | undefined;

export function hotpathVersion(): string {
  if (cached === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
      cached = typeof pkg.version === 'string' ? pkg.version : 'unknown';
    } catch {
      cached = 'unknown';
    }
  }
  return cached;
}
