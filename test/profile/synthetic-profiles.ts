// Test helper: small hand-written .cpuprofile objects with exactly known weights, for the
// arithmetic (merging, windows, weights) that real profiles can only check loosely.

import type { CpuProfile, CpuProfileNode } from '../../src/profile/cpu-profile.js';

const cf = (functionName: string, url: string, line = 0) => ({
  functionName,
  scriptId: url ? '7' : '0',
  url,
  lineNumber: line,
  columnNumber: 4,
});

export function node(id: number, name: string, url: string, children: number[] = [], line = 0): CpuProfileNode {
  return { id, callFrame: cf(name, url, line), hitCount: 0, children };
}

/**
 * (root) → main (app) → [work (app) twice: an optimized and an unoptimized copy] → JSON-ish native leaf,
 * plus (idle) and (garbage collector).
 */
export function syntheticProfile(cwd: string): CpuProfile {
  const app = `file://${cwd}/app.js`;
  return {
    nodes: [
      node(1, '(root)', '', [2, 6, 7]),
      node(2, 'main', app, [3, 4], 1),
      node(3, 'work', app, [5], 10),
      node(4, 'work', app, [], 10),
      node(5, 'update', 'node:internal/crypto/hash', [], 100),
      node(6, '(idle)', ''),
      node(7, '(garbage collector)', ''),
    ],
    startTime: 1_000_000,
    endTime: 1_010_000,
    // t = 1000, 2000, ..., 10000 µs after start; each sample weighs 1000 µs (last: until endTime).
    samples: [3, 4, 5, 5, 2, 6, 6, 7, 3, 4],
    timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };
}
