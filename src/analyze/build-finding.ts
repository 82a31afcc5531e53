// The one way an analyzer makes a Finding: the parts every finding has, in the order report.json
// writes them, so an analyzer writes only what is its own (its figures, its sentences, its advice).
// A growth finding (a leak, a registration per request) also carries the latency creep it
// explains: the trend's figures close its evidence and the creep's share is its impact.

import type { Category, Culprit, Evidence, Finding, Severity } from './finding.js';
import { findingCodes, type FindingCode } from './finding-codes.js';
import { creepShare, trendEvidence, type LatencyTrend } from './signals/latency-trend.js';

interface CommonParts {
  code: FindingCode;
  category: Category;
  severity: Severity;
  /** The code's title in the registry (finding-codes.ts) when the analyzer has none more precise. */
  title?: string | undefined;
  summary: string;
  evidence: Evidence;
  /** Left out of the finding when there is none. */
  culprit?: Culprit | undefined;
  recommendation: string;
}

/** What latency creep a growth finding explains, and the least impact it has without one. */
export interface GrowthImpact {
  trend: LatencyTrend | undefined;
  baseImpact: number;
}

export type FindingParts = CommonParts & ({ impact: number; growth?: never } | { growth: GrowthImpact; impact?: never });

export function buildFinding(parts: FindingParts): Finding {
  const { code, category, severity, title, summary, culprit, recommendation } = parts;
  const growth = parts.growth;
  const impact = growth ? Math.max(creepShare(growth.trend), growth.baseImpact) : parts.impact;
  return {
    code,
    category,
    severity,
    title: title ?? findingCodes[code],
    summary,
    evidence: growth ? { ...parts.evidence, ...trendEvidence(growth.trend) } : parts.evidence,
    ...(culprit ? { culprit } : {}),
    recommendation,
    impact,
  };
}

/** A growth's severity: critical for the analyzer's own reasons, or when the growth makes latency creep. */
export function growthSeverity(critical: boolean, trend: LatencyTrend | undefined): Severity {
  return critical || trend?.creeping ? 'critical' : 'warning';
}
