// The frameless work a function's ticks are charged to, from its source lines, on a real file: on
// the line a callback starts on only its own text counts, and the predicate of a lookup written
// just before it is that lookup's linear search.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildCallTree } from '../../src/profile/build-call-tree.js';
import type { CpuProfile } from '../../src/profile/cpu-profile.js';
import { node } from './synthetic-profiles.js';

const SOURCE = [
  'function recentActivity(events) {',
  '  return [...events].sort((a, b) => new Date(b.createdAt) - new Date(a.createdAt));',
  '}',
  'function dedupe(items, out) {',
  '  for (const item of items) if (!out.some((o) => o.sku === item.sku)) out.push(item);',
  '}',
].join('\n');

test('a callback is labelled by its own text on its first line, and a lookup\'s predicate by the lookup', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-inline-work-'));
  try {
    const file = join(dir, 'feed.js');
    writeFileSync(file, SOURCE);
    const url = pathToFileURL(file).href;
    const lines = SOURCE.split('\n');
    // V8 puts an arrow function at its parameters: 0-based line and column.
    const comparator = node(3, '', url, [], 1);
    comparator.callFrame.columnNumber = lines[1].indexOf('(a, b)');
    comparator.positionTicks = [{ line: 2, ticks: 10 }];
    const outer = node(2, 'recentActivity', url, [3], 0);
    outer.callFrame.columnNumber = lines[0].indexOf('(');
    outer.positionTicks = [{ line: 2, ticks: 4 }];
    const predicate = node(5, '', url, [], 4);
    predicate.callFrame.columnNumber = lines[4].indexOf('(o)');
    predicate.positionTicks = [{ line: 5, ticks: 8 }];
    const profile: CpuProfile = {
      nodes: [node(1, '(root)', '', [2, 4]), outer, comparator, node(4, 'dedupe', url, [5], 3), predicate],
      startTime: 0,
      endTime: 22_000,
      samples: [...Array(10).fill(3), ...Array(4).fill(2), ...Array(8).fill(5)],
      timeDeltas: Array.from({ length: 22 }, (_, i) => (i === 0 ? 0 : 1000)),
    };
    const tree = buildCallTree(profile, { cwd: dir });
    const labelsOf = (name: string, line: number) => (tree.inlineWork ?? [])
      .filter((e) => tree.frames[tree.frame[e.node]].name === name && tree.frames[tree.frame[e.node]].line === line).map((e) => e.work);
    // The comparator (line 2) did not run the spread written before it; the function that did is labelled.
    assert.deepEqual(labelsOf('(anonymous)', 2), []);
    assert.deepEqual(labelsOf('recentActivity', 1), ['copy']);
    // `out.some((o) => ...)`: the predicate's time is the linear search.
    assert.deepEqual(labelsOf('(anonymous)', 5), ['search']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
