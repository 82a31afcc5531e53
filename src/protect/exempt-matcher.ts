// Compiles the `exempt` option into one predicate: health checks and the like are answered
// even under pressure. Only consulted when a request would otherwise be shed, that is while the
// server is overloaded: a user predicate that throws must not take the server down then (it
// counts as "not exempt", with one warning), and a /g or /y pattern must not answer by turns
// (RegExp#test moves their lastIndex).

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
  if (typeof exempt === 'function') return guarded(exempt);
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  for (const p of exempt) {
    if (typeof p === 'string') exact.add(p);
    else patterns.push(p.global || p.sticky ? new RegExp(p.source, p.flags.replace(/[gy]/g, '')) : p);
  }
  if (exact.size === 0 && patterns.length === 0) return () => false;
  return (req) => {
    const path = pathOf(req.url);
    return exact.has(path) || patterns.some((re) => re.test(path));
  };
}

/** The user's predicate, whose throw never escapes: it counts as "not exempt", with one warning. */
function guarded(predicate: (req: IncomingMessage) => boolean): ExemptMatcher {
  let warned = false;
  return (req) => {
    try {
      return Boolean(predicate(req));
    } catch (err) {
      if (!warned) {
        warned = true;
        process.emitWarning(
          `protect(): the exempt function threw: ${err instanceof Error ? err.message : String(err)}; the request is treated as not exempt`,
          'HotpathProtectWarning',
        );
      }
      return false;
    }
  };
}
