// Runs every analyzer over a run and orders the findings by impact, so findings[0] is the
// main problem. An analyzer that throws is reported as an info finding, never fatal: one bad
// detector must not cost the user the rest of the diagnosis.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding, Severity } from './finding.js';
import type { Analyzer } from './analyzer.js';
import { analyzers } from './analyzers.js';

const severityRank: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

export function analyzeRun(run: RunData, list: readonly Analyzer[] = analyzers): Finding[] {
  const findings: Finding[] = [];
  for (const analyze of list) {
    try {
      findings.push(...analyze(run).filter(hasEvidence));
    } catch (err) {
      findings.push(analyzerFailed(analyze, err));
    }
  }
  return orderFindings(findings);
}

/** Severity first (a critical finding always leads), then the share of time explained. */
export function orderFindings(findings: Finding[]): Finding[] {
  return [...findings].sort((a, b) => severityRank[a.severity] - severityRank[b.severity] || b.impact - a.impact);
}

/** DESIGN.md: a finding without evidence is not shown. */
function hasEvidence(f: Finding): boolean {
  return Object.keys(f.evidence).length > 0;
}

function analyzerFailed(analyze: Analyzer, err: unknown): Finding {
  const message = err instanceof Error ? err.message : String(err);
  return {
    code: 'HOTPATH_ANALYZER_FAILED',
    category: 'healthy',
    severity: 'info',
    title: `The ${analyze.name || 'an'} analyzer failed`,
    summary: `One detector could not read this run (${message}); the other findings stand.`,
    evidence: { analyzer: analyze.name, error: message },
    recommendation: 'Run `hotpath report <run-dir> --debug` and file an issue with the run directory attached.',
    impact: 0,
  };
}
