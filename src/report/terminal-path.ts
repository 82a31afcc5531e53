// Where a finding's cost is paid and the path to it, for the terminal: a cost paid in one function
// and caused in another (a helper called per item by a loop, a pattern compiled where it is first
// used) names both, and the app functions from the request's first one down to the payer with
// their calls per request (evidence `paidIn`, `callPath`).

import type { Finding } from '../analyze/finding.js';

interface Step {
  function: string;
  file: string;
  line: number;
  callsPerRequest?: number;
}

const isStep = (x: unknown): x is Step =>
  typeof x === 'object' &&
  x !== null &&
  typeof (x as Step).function === 'string' &&
  typeof (x as Step).file === 'string' &&
  typeof (x as Step).line === 'number';

/** Calls per request, short: "1", "2.5", "3,000". */
function perRequest(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : String(Math.round(n * 10) / 10);
}

/** `paid in` (when not the culprit) and `path` as label and text, or nothing when the finding has neither. */
export function pathLines(f: Finding): { label: string; text: string }[] {
  const out: { label: string; text: string }[] = [];
  const paid = f.evidence.paidIn;
  if (isStep(paid) && (paid.function !== f.culprit?.function || paid.file !== f.culprit.file))
    out.push({ label: 'paid in ', text: `${paid.function} ${paid.file}${paid.line > 0 ? `:${paid.line}` : ''}` });
  const path = f.evidence.callPath;
  if (Array.isArray(path) && path.length > 1 && path.every(isStep)) {
    const steps = path.map(
      (s) => `${s.function} (${s.file}:${s.line}${s.callsPerRequest !== undefined ? `, ${perRequest(s.callsPerRequest)}/req` : ''})`,
    );
    out.push({ label: 'path    ', text: steps.join(' → ') });
  }
  return out;
}
