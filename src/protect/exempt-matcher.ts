// Compiles the `exempt` option into one predicate: health checks and the like are answered
// even under pressure. Only consulted when a request would otherwise be shed.

import type { IncomingMessage } from 'node:http';
import type { ExemptOption } from './protect-options.js';

export type ExemptMatcher = (req: IncomingMessage) => boolean;

/** The path of a request URL without its query string. */
export function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

export function exemptMatcher(exempt: ExemptOption): ExemptMatcher {
  if (typeof exempt === 'function') return exempt;
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  for (const p of exempt) {
    if (typeof p === 'string') exact.add(p);
    else patterns.push(p);
  }
  if (exact.size === 0 && patterns.length === 0) return () => false;
  return (req) => {
    const path = pathOf(req.url);
    return exact.has(path) || patterns.some((re) => re.test(path));
  };
}
