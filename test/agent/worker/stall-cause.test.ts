// The stall cause: the hottest leaf stacks of a profile taken during a stall, leaf first,
// with their share of the samples; idle/program/GC leaves and noise below 5 % left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hottestStacks } from '../../../src/agent/worker/stall-cause.js';

const frame = (functionName: string, url = 'file:///app/server.js', lineNumber = 0) => ({
  functionName,
  url,
  lineNumber,
  columnNumber: 4,
  scriptId: '1',
});

// (root) -> handler -> hash (leaf), handler -> stringify (leaf), (root) -> (program), (root) -> tick
const nodes = [
  { id: 1, callFrame: frame('(root)', ''), children: [2, 5, 6] },
  { id: 2, callFrame: frame('handler', 'file:///app/server.js', 9), children: [3, 4] },
  {
    id: 3,
    callFrame: frame('hash', 'file:///app/crypto.js', 19),
    positionTicks: [
      { line: 21, ticks: 10 },
      { line: 24, ticks: 60 },
    ],
  },
  { id: 4, callFrame: frame('stringify', '', 0) },
  { id: 5, callFrame: frame('(program)', '') },
  { id: 6, callFrame: frame('tick', 'node:internal/timers', 1) },
];

test('leaf stacks ranked by samples, leaf first, 1-based lines', () => {
  const samples = [...Array(70).fill(3), ...Array(20).fill(4), ...Array(8).fill(5), ...Array(2).fill(6)];
  const cause = hottestStacks({ nodes, samples })!;
  assert.equal(cause.length, 2, 'tick (2 %) is noise, (program) is not code');
  assert.equal(cause[0].share, 0.7);
  assert.deepEqual(cause[0].stack, [
    { function: 'hash', file: 'file:///app/crypto.js', line: 20, column: 5 },
    { function: 'handler', file: 'file:///app/server.js', line: 10, column: 5 },
  ]);
  assert.equal(cause[0].line, 24, "the leaf's hottest line");
  assert.equal(cause[1].share, 0.2);
  assert.equal(cause[1].stack[0].function, 'stringify');
  assert.equal(cause[1].line, undefined, 'no line ticks, no line');
});

test('no samples, or only idle ones: no cause', () => {
  assert.equal(hottestStacks({ nodes, samples: [] }), undefined);
  assert.equal(hottestStacks({ nodes, samples: [5, 5, 5] }), undefined);
});
