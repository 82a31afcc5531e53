// Shared checks of the end-to-end diagnosis tests (examples and scenarios): the run completed,
// and either it is healthy (no warning or critical finding, a "healthy" one) or it has an
// actionable main finding. The summary line per finding goes into every assertion message.

import assert from 'node:assert/strict';
import type { Report } from '../../../src/report/report-schema.js';
import type { Finding } from '../../../src/analyze/finding.js';

/** One line per finding, then the main finding's evidence (what a failure needs to be understood). */
export function findingsSummary(report: Report): string {
  const lines = report.findings.map(
    (f) =>
      `${f.severity} ${f.category} ${f.culprit ? `${f.culprit.function} ${f.culprit.file}:${f.culprit.line}:${f.culprit.column ?? 0}` : ''}`,
  );
  const main = report.findings[0];
  return [...lines, ...(main ? [`main finding evidence: ${JSON.stringify(main.evidence).slice(0, 3000)}`] : [])].join('\n');
}

/** Asserts the run completed and is healthy (returns undefined), or returns its actionable main finding. */
export function checkDiagnosis(report: Report, stderr: string, healthy: boolean): Finding | undefined {
  const summary = findingsSummary(report);
  assert.equal(report.target.outcome.status, 'completed', stderr);
  if (healthy) {
    assert.deepEqual(
      report.findings.filter((f) => f.severity !== 'info').map((f) => f.code),
      [],
      summary,
    );
    assert.ok(
      report.findings.some((f) => f.category === 'healthy'),
      summary,
    );
    return undefined;
  }
  const [main] = report.findings;
  assert.ok(main, `no finding\n${stderr}`);
  assert.notEqual(main.severity, 'info', summary);
  return main;
}
