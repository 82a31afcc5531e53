// What a culprit's attributed CPU time was spent on, in words a person reads
// ("PBKDF2 key derivation 92 %"), and the dominant kind of work when one stands out.

import type { WorkItem } from '../../profile/work-breakdown.js';
import { round } from './stats.js';

/** Work kinds specific enough to name in a finding (the rest is "its own code"). */
const SPECIFIC = new Set([
  'json',
  'crypto',
  'regex',
  'zlib',
  'zlib-async',
  'fs',
  'buffer',
  'net',
  'stream',
  'inspect',
  'vm',
  'http-client',
  'intl',
  'errors',
  'search',
  'copy',
  'child-process',
  'compile',
  'clone',
  'ipc',
]);

/** Whether a work kind is specific enough to name and advise on (not "own code", a package, Node core). */
export function isSpecificWork(work: string): boolean {
  return SPECIFIC.has(work);
}
/** A kind must carry this share of the function's time to be called its dominant work. */
export const DOMINANT_WORK_SHARE = 0.3;

export function workSummary(items: WorkItem[]): {
  dominant?: string;
  label?: string;
  breakdown: { work: string; label: string; share: number }[];
} {
  const breakdown = items.slice(0, 5).map((i) => ({ work: i.work, label: i.label, share: round(i.share, 3) }));
  const top = items.find((i) => SPECIFIC.has(i.work) && i.share >= DOMINANT_WORK_SHARE);
  return top ? { dominant: top.work, label: top.label, breakdown } : { breakdown };
}

/**
 * "PBKDF2 key derivation (92 %), JSON.stringify (5 %)" from the specific items, and a dependency
 * package doing a large part of it ("the pino package (71 %)": a logger formatting whole objects).
 */
export function describeWork(items: WorkItem[]): string {
  return items
    .filter((i) => (SPECIFIC.has(i.work) && i.share >= 0.05) || (i.work === 'deps' && i.share >= DOMINANT_WORK_SHARE))
    .slice(0, 3)
    .map((i) => `${i.work === 'deps' ? `the ${i.label} package` : i.label} (${Math.round(i.share * 100)} %)`)
    .join(', ');
}
