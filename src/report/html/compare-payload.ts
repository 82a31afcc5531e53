// The data embedded in compare.html (gzip + base64, decoded in the page): the comparison of two
// runs and their differential call tree. Types only and no Node imports, so the UI type-checks
// against it too (docs/compare.md, compare.html).

import type { Comparison } from '../compare-schema.js';
import type { DiffTree } from '../compare-schema.js';

export const COMPARE_PAYLOAD_VERSION = 1;

export interface ComparePayload {
  version: typeof COMPARE_PAYLOAD_VERSION;
  kind: 'compare';
  generatedAt: number;
  hotpathVersion: string;
  comparison: Comparison;
  /** Absent when a run has no CPU profile (comparison.missing says which). */
  diff?: DiffTree;
}
