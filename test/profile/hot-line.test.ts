// hotLine: where in a function its own samples fell, from the profile's positionTicks (the
// lines of one function merged over its nodes), on a hand-written profile.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCallTree } from '../../src/profile/build-call-tree.js';
import { hotLine } from '../../src/profile/hot-line.js';
import type { CpuProfile } from '../../src/profile/cpu-profile.js';
import { node } from './synthetic-profiles.js';

const cwd = '/srv/app';
const app = `file://${cwd}/lib/pricelist.js`;

function profile(): CpuProfile {
  const render = node(2, 'renderPriceList', app, [3], 5);
  render.positionTicks = [
    { line: 9, ticks: 6 },
    { line: 8, ticks: 1 },
  ];
  const again = node(4, 'renderPriceList', app, [], 5);
  again.positionTicks = [
    { line: 9, ticks: 2 },
    { line: 11, ticks: 1 },
  ];
  const format = node(3, 'formatPrice', app, [], 1);
  format.positionTicks = [{ line: 3, ticks: 4 }];
  return {
    nodes: [node(1, '(root)', '', [2, 4]), render, format, again],
    startTime: 0,
    endTime: 14_000,
    samples: [2, 2, 2, 2, 2, 2, 2, 4, 4, 4, 3, 3, 3, 3],
    timeDeltas: Array.from({ length: 14 }, (_, i) => (i === 0 ? 0 : 1000)),
  };
}

test("hotLine: the line with most of a function's ticks, over all its nodes, with its share", () => {
  const tree = buildCallTree(profile(), { cwd, sourceMaps: false });
  const render = tree.frames.findIndex((f) => f.name === 'renderPriceList');
  const format = tree.frames.findIndex((f) => f.name === 'formatPrice');
  assert.deepEqual(hotLine(tree, render), { line: 9, share: 0.8, ticks: 8 });
  assert.deepEqual(hotLine(tree, format), { line: 3, share: 1, ticks: 4 });
  // A frame with no ticks of its own (the root) has no hot line.
  assert.equal(hotLine(tree, 0), undefined);
});
