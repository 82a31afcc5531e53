// Findings of two runs matched by code and culprit (function and file; lines move with a fix):
// resolved (before only), new (after only), still present (both, with both severities).
// "Healthy" is no problem to resolve or keep: it is left out.

import type { Finding } from '../analyze/finding.js';
import type { FindingChange } from '../report/compare-schema.js';

const keyOf = (f: Finding) => `${f.code}\u0000${f.culprit?.function ?? ''}\u0000${f.culprit?.file ?? ''}`;

const row = (f: Finding): FindingChange => ({ code: f.code, title: f.title, ...(f.culprit ? { culprit: f.culprit } : {}) });

export function compareFindings(before: readonly Finding[], after: readonly Finding[]) {
  const problems = (fs: readonly Finding[]) => fs.filter((f) => f.category !== 'healthy');
  const b = new Map(problems(before).map((f) => [keyOf(f), f]));
  const a = new Map(problems(after).map((f) => [keyOf(f), f]));
  const resolved: FindingChange[] = [];
  const added: FindingChange[] = [];
  const stillPresent: FindingChange[] = [];
  for (const [k, f] of b) {
    const g = a.get(k);
    if (g) stillPresent.push({ ...row(g), severityBefore: f.severity, severityAfter: g.severity });
    else resolved.push({ ...row(f), severityBefore: f.severity });
  }
  for (const [k, g] of a) if (!b.has(k)) added.push({ ...row(g), severityAfter: g.severity });
  return { resolved, new: added, stillPresent };
}
