// Off-target load: most of the load's responses were redirects or errors, so what the run
// measured is the redirect, the 404 page or the error path, not the app's work. A server whose
// `/` redirects to `/login` or `/app`, or has no route there (an API under `/api/...`), answers
// each request in a few microseconds and would otherwise read healthy with headroom to spare.
// Given in place of the healthy finding only (analyze-run.ts), when nothing else was found: an
// error path that is itself slow (a validator backtracking for seconds before its 400) is the
// app's work, and the findings about it say so. Warning severity, as setup-failed, so the run is
// never called healthy; it says which statuses came back and how to point the load at a route.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { round } from './signals/stats.js';

/** At least this share of the responses must be off target (3xx but 304, 4xx, 5xx) for the finding. */
export const OFF_TARGET_MIN_SHARE = 0.5;
/** Fewer responses than this say nothing about the load (a run that barely started). */
export const OFF_TARGET_MIN_RESPONSES = 20;

/** A status that is no answer of the route asked for: a redirect elsewhere or an error (304 Not Modified is an answer). */
export function offTargetStatus(code: string): boolean {
  const n = Number(code);
  return Number.isInteger(n) && n >= 300 && n !== 304;
}

const kind = (n: number, one: boolean) =>
  `${one ? 'a ' : ''}${n < 400 ? 'redirect' : n < 500 ? 'client error' : 'server error'}${one ? '' : 's'}`;

/** HOTPATH_LOAD_OFF_TARGET, or undefined: too few off-target responses, or a warning or critical finding stands. */
export function offTargetLoad(run: RunData, findings: readonly Finding[]): Finding | undefined {
  if (findings.some((f) => f.severity !== 'info')) return undefined;
  const codes = run.load?.statusCodes ?? {};
  const total = Object.values(codes).reduce((n, v) => n + v, 0);
  if (total === 0) return noResponse(run);
  if (total < OFF_TARGET_MIN_RESPONSES) return undefined;
  const off = Object.entries(codes)
    .filter(([c, n]) => offTargetStatus(c) && n > 0)
    .sort((a, b) => b[1] - a[1]);
  const offCount = off.reduce((n, [, v]) => n + v, 0);
  const share = offCount / total;
  if (share < OFF_TARGET_MIN_SHARE) return undefined;
  const [topCode, topCount] = off[0];
  const top = Number(topCode);
  const path = requestPath(run);
  const target = run.load?.options.scenario ? `the scenario's ${run.load.options.scenario} requests` : `\`${path}\``;
  const what = off.map(([c, n]) => `${n.toLocaleString('en-US')} × ${c}`).join(', ');
  const all = offCount === total;
  const advice =
    top < 400
      ? `${target} redirected: point the load at the page it leads to (\`--path\` that path, with \`--setup\` for a login it needs).`
      : top === 401 || top === 403
        ? `${target} needed credentials: pass them (\`-H 'authorization: ...'\`, a cookie from \`--setup\`).`
        : top === 404 || top === 405
          ? `${target} found no route: point the load at a route the app serves (\`--path\`, or a scenario of requests).`
          : top === 429
            ? "The app's rate limiter refused the load: raise its limit for the run or lower the load (`--rate`)."
            : top >= 500
              ? `${target} failed: the error is in the target's output (\`target.log\`); the findings describe the error path.`
              : `Check ${target} by hand (\`curl -i\`) and point the load at a route that answers 2xx.`;
  return {
    code: 'HOTPATH_LOAD_OFF_TARGET',
    category: 'off-target-load',
    severity: 'warning',
    title: `${all ? 'Every' : `${round(share * 100, 0)} % of the`} response${all ? '' : 's'} of the load ${all ? 'was' : 'were'} ${kind(top, all)} (${topCode}): the run measured that, not the app's work`,
    summary:
      `Of ${total.toLocaleString('en-US')} responses to ${target}, ${what}. ` +
      `Answering ${top < 400 ? 'a redirect' : 'an error'} costs the app next to nothing, so the figures (throughput, CPU per request, headroom) describe ` +
      `${top < 400 ? 'the redirect' : 'the error path'}, and "no problem found" would say nothing about the routes users reach.`,
    evidence: {
      responses: total,
      offTargetResponses: offCount,
      offTargetShare: round(share, 3),
      statusCodes: codes,
      topStatus: top,
      topStatusCount: topCount,
      path,
    },
    recommendation: advice,
    impact: 0,
  };
}

/**
 * Not one request of the load got a response, each one failing (a reset, a closed connection, a
 * malformed answer, a timeout): what the run measured is that failure (HOTPATH_ERR_NO_RESPONSES
 * on the terminal). Said as a finding too, so report.json and the HTML say what happened.
 */
function noResponse(run: RunData): Finding | undefined {
  const load = run.load;
  if (!load || load.requests.sent < OFF_TARGET_MIN_RESPONSES || load.stoppedEarly) return undefined;
  const failures = Object.entries(load.errors.byCode).filter(([, n]) => n > 0);
  if (load.errors.timeouts > 0) failures.push(['timeouts', load.errors.timeouts]);
  if (load.errors.parse > 0) failures.push(['malformed responses', load.errors.parse]);
  if (failures.length === 0) return undefined;
  failures.sort((a, b) => b[1] - a[1]);
  const what = failures.map(([c, n]) => `${c} ${n.toLocaleString('en-US')}`).join(', ');
  const sent = load.requests.sent.toLocaleString('en-US');
  return {
    code: 'HOTPATH_LOAD_OFF_TARGET',
    category: 'off-target-load',
    severity: 'warning',
    title: `No request of the load got a response (${what}): the run measured nothing of the app`,
    summary:
      `Of ${sent} requests sent to \`${requestPath(run)}\`, none was answered: ${what}. ` +
      `${failures[0][0] === 'EOF' || failures[0][0] === 'ECONNRESET' ? 'The server closed or reset each connection before it answered. ' : ''}` +
      'Throughput, latency and CPU per request describe that failure, not the app.',
    evidence: {
      responses: 0,
      sent: load.requests.sent,
      errorsByCode: load.errors.byCode,
      timeouts: load.errors.timeouts,
      malformed: load.errors.parse,
      path: requestPath(run),
    },
    recommendation:
      "Send one request by hand (`curl -v` the URL) and read the target's output in `target.log`: a handler that " +
      'destroys the socket or throws inside a try that swallows it, a TLS port driven over plain HTTP (`--url https://...`), ' +
      'a proxy or framework that refuses the request before the app sees it.',
    impact: 0,
  };
}

/** The path of the URL the load was driven at (a scenario's requests have their own). */
function requestPath(run: RunData): string {
  const url = run.load?.url ?? '';
  try {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  } catch {
    return '/';
  }
}
