// Setup failed: a `--setup` request (create the user, log in) got an error status or no
// answer, so the load that followed most likely measured something else than intended (every
// request refused as unauthenticated, a 404 page). Warning severity: the run is not healthy
// whatever the figures say, and the terminal, report.json, report.md and the HTML all say why.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';

/** A setup response with this status or above is a failed setup request. */
export const SETUP_FAILED_STATUS = 400;

export function setupFailed(run: RunData): Finding[] {
  const setup = run.load?.setup ?? [];
  const failed = setup.filter((s) => s.error !== undefined || (s.status ?? 0) >= SETUP_FAILED_STATUS);
  if (failed.length === 0) return [];
  const what = (s: (typeof failed)[number]) =>
    `${s.method} ${s.path} ${s.error !== undefined ? `failed (${s.error})` : `answered ${s.status}`}`;
  return [
    {
      code: 'HOTPATH_SETUP_FAILED',
      category: 'setup-failed',
      severity: 'warning',
      title: `${failed.length} of ${setup.length} setup request${setup.length === 1 ? '' : 's'} failed: the load may have measured the wrong thing`,
      summary:
        `${failed.slice(0, 3).map(what).join('; ')}${failed.length > 3 ? `; and ${failed.length - 3} more` : ''}. ` +
        'The load ran after it anyway: if it needed what setup should have made (a user, a session), its figures describe the error path.',
      evidence: {
        setupRequests: setup.length,
        failed: failed.map((s) => ({
          method: s.method,
          path: s.path,
          ...(s.status !== undefined ? { status: s.status } : {}),
          ...(s.error !== undefined ? { error: s.error } : {}),
        })),
        ...(run.load !== null && run.load !== undefined ? { loadStatusCodes: run.load.statusCodes } : {}),
      },
      recommendation:
        'Check the `--setup` requests against the server (method, path, headers, body: `curl` them) and its output in ' +
        '`target.log`; run again once each answers with a 2xx or 3xx.',
      impact: 0,
    },
  ];
}
