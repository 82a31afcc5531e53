// A load run in which not one request got a response measured nothing: its latency table is
// empty and its throughput zero, whatever the server's real speed. The CLI says so with
// HOTPATH_ERR_NO_RESPONSES and exits 1 (after printing what was gathered), instead of a
// success with an empty table. A run stopped early (Ctrl-C) is left to its own outcome.

import type { LoadResult } from './load-result.js';

/** Why the run measured nothing, or undefined when some request got a response. */
export function noResponsesReason(result: LoadResult): string | undefined {
  if (result.requests.total > 0 || result.stoppedEarly) return undefined;
  const seconds = `${(result.durationMs / 1000).toFixed(1)} s`;
  const { sent } = result.requests;
  const errors = Object.entries(result.errors.byCode)
    .sort((a, b) => b[1] - a[1])
    .map(([code, n]) => `${code} ${n}`);
  if (result.errors.timeouts > 0) errors.push(`timeouts ${result.errors.timeouts}`);
  if (result.errors.parse > 0) errors.push(`malformed responses ${result.errors.parse}`);
  const why = errors.length > 0 ? `: ${errors.join(', ')}` : sent > 0 ? ': the server accepted the requests and never answered' : '';
  const what =
    sent > 0 ? `No request got a response in ${seconds} (${sent.toLocaleString('en-US')} sent)` : `No request could be sent in ${seconds}`;
  return `${what}${why}. The figures above measure nothing; check that the URL serves HTTP and the server is not stuck.`;
}
