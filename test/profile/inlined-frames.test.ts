// expandInlinedFrames on hand-written profiles with known function ranges: the ticks of lines
// in inlined callees move to nodes of their own (through the callers the profile saw), samples
// follow in tick proportion, and every doubtful line stays with the node V8 charged.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandInlinedFrames } from '../../src/profile/inlined-frames.js';
import type { FunctionRanges } from '../../src/profile/script-functions.js';
import type { CpuProfile, CpuProfileNode } from '../../src/profile/cpu-profile.js';
import { buildCallTree } from '../../src/profile/build-call-tree.js';

const APP = 'file:///srv/app.js';
const LIB = 'file:///srv/lib.js';

const at = (
  id: number,
  name: string,
  url: string,
  line: number,
  col: number,
  children: number[] = [],
  extra: Partial<CpuProfileNode> = {},
): CpuProfileNode => ({
  id,
  callFrame: { functionName: name, scriptId: url === LIB ? '8' : '7', url, lineNumber: line, columnNumber: col },
  hitCount: 0,
  children,
  ...extra,
});

/** `count` samples of node `id`. */
const many = (id: number, count: number) => new Array<number>(count).fill(id);

function profileOf(nodes: CpuProfileNode[], samples: number[]): CpuProfile {
  return { nodes, startTime: 0, endTime: (samples.length + 1) * 1000, samples, timeDeltas: samples.map(() => 1000) };
}

const hits = (p: CpuProfile, id: number) => p.samples.filter((s) => s === id).length;
const named = (p: CpuProfile, name: string, parent: number) => {
  const kids = p.nodes.find((n) => n.id === parent)!.children ?? [];
  return p.nodes.filter((n) => kids.includes(n.id) && n.callFrame.functionName === name);
};

// app.js (0-based lines): deriveToken 2-6, issueSession 7-10, handler 11-20 with a closure at
// 14-17, unused 22-25 (never ran), a and b sharing line 30.
const appRanges: FunctionRanges = {
  [APP]: [
    ['', 0, 0, 40, 0, 1],
    ['deriveToken', 2, 0, 6, 1, 5],
    ['issueSession', 7, 0, 10, 1, 5],
    ['handler', 11, 18, 20, 1, 3],
    ['', 14, 20, 17, 3, 2],
    ['unused', 22, 0, 25, 1, 0],
    ['a', 30, 0, 30, 10, 1],
    ['b', 30, 12, 30, 30, 1],
  ],
};

function handlerProfile(): CpuProfile {
  const handlerTicks = [
    { line: 5, ticks: 60 }, // deriveToken's loop
    { line: 9, ticks: 10 }, // issueSession
    { line: 13, ticks: 20 }, // the handler's own
    { line: 16, ticks: 5 }, // inside the closure
    { line: 15, ticks: 3 }, // the closure's first line, shared with the handler
    { line: 24, ticks: 2 }, // a function that never ran
    { line: 31, ticks: 1 }, // two functions on one line
  ];
  return profileOf(
    [
      at(1, '(root)', '', -1, -1, [2]),
      at(2, 'handler', APP, 11, 18, [3], { hitCount: 101, positionTicks: handlerTicks }),
      at(3, 'issueSession', APP, 7, 21, [4], { hitCount: 1, positionTicks: [{ line: 9, ticks: 1 }] }),
      at(4, 'deriveToken', APP, 2, 20, [], { hitCount: 4, positionTicks: [{ line: 5, ticks: 4 }] }),
    ],
    [...many(2, 101), 3, ...many(4, 4)],
  );
}

test("ticks on inlined callees' lines move to them, through the callers the profile saw", () => {
  const before = handlerProfile();
  const after = expandInlinedFrames(before, appRanges);
  assert.notEqual(after, before);
  assert.equal(before.nodes.length, 4, 'the input is left as it was');

  const handler = after.nodes.find((n) => n.id === 2)!;
  assert.deepEqual(handler.positionTicks, [
    { line: 13, ticks: 20 },
    { line: 15, ticks: 3 },
    { line: 24, ticks: 2 },
    { line: 31, ticks: 1 },
  ]);
  assert.equal(hits(after, 2), 26);

  const [session] = named(after, 'issueSession', 2).filter((n) => n.id !== 3);
  assert.ok(session, 'issueSession under the handler, a node of its own');
  assert.deepEqual(session.callFrame, before.nodes[2].callFrame, 'with the frame the profile saw it under');
  assert.deepEqual(session.positionTicks, [{ line: 9, ticks: 10 }]);
  const [derive] = named(after, 'deriveToken', session.id);
  assert.ok(derive, 'deriveToken under issueSession');
  assert.deepEqual(derive.positionTicks, [{ line: 5, ticks: 60 }]);
  assert.equal(hits(after, session.id), 10);
  assert.equal(hits(after, derive.id), 60);

  const [closure] = named(after, '', 2);
  assert.ok(closure, 'the closure, a frame where V8 said it starts');
  assert.deepEqual([closure.callFrame.lineNumber, closure.callFrame.columnNumber, closure.callFrame.url], [14, 20, APP]);
  assert.equal(hits(after, closure.id), 5);

  assert.equal(after.samples.length, before.samples.length);
  assert.equal(hits(after, 3), 1, 'other nodes keep their samples');
  assert.equal(hits(after, 4), 4);
  for (const n of after.nodes) assert.equal(n.hitCount ?? 0, hits(after, n.id), `hitCount of ${n.callFrame.functionName || n.id}`);
});

test('the call tree names the inlined function as the one spending the time', () => {
  const tree = buildCallTree(expandInlinedFrames(handlerProfile(), appRanges), { cwd: '/srv' });
  const self = new Map<string, number>();
  for (let i = 1; i < tree.frame.length; i++) {
    const name = tree.frames[tree.frame[i]].name;
    self.set(name, (self.get(name) ?? 0) + tree.self[i]);
  }
  const top = [...self].sort((a, b) => b[1] - a[1])[0];
  assert.equal(top[0], 'deriveToken');
  assert.equal(top[1], 64_000, '60 moved samples and 4 of its own, 1 ms each');
});

test('samples of a node spread over its callees evenly in time, not in blocks', () => {
  const after = expandInlinedFrames(handlerProfile(), appRanges);
  const firstHalf = after.samples.slice(0, 50);
  const derive = after.nodes.find((n) => n.callFrame.functionName === 'deriveToken' && n.id !== 4)!;
  const inFirst = firstHalf.filter((s) => s === derive.id).length;
  assert.ok(Math.abs(inFirst - 30) <= 1, `${inFirst} of deriveToken's 60 in the first 50 of 101 samples`);
});

test('a line outside the function is a callee in another file only when no function here spans it', () => {
  const ranges: FunctionRanges = {
    [APP]: [
      ['', 0, 0, 40, 0, 1],
      ['handler', 11, 18, 20, 1, 3],
      ['local', 22, 0, 25, 1, 3],
    ],
    [LIB]: [
      ['', 0, 0, 60, 0, 1],
      ['helper', 22, 0, 24, 1, 2],
      ['format', 26, 0, 29, 1, 2],
    ],
  };
  const before = profileOf(
    [
      at(1, '(root)', '', -1, -1, [2]),
      at(2, 'handler', APP, 11, 18, [3, 4], {
        hitCount: 30,
        positionTicks: [
          { line: 13, ticks: 10 },
          { line: 24, ticks: 8 },
          { line: 28, ticks: 12 },
        ],
      }),
      at(3, 'helper', LIB, 22, 15, [], { hitCount: 1, positionTicks: [{ line: 23, ticks: 1 }] }),
      at(4, 'format', LIB, 26, 15, [], { hitCount: 1, positionTicks: [{ line: 27, ticks: 1 }] }),
    ],
    [...many(2, 30), 3, 4],
  );
  const after = expandInlinedFrames(before, ranges);
  const handler = after.nodes.find((n) => n.id === 2)!;
  // Line 24 is local's (this file) and helper's (called, another file): V8 does not say which.
  assert.deepEqual(handler.positionTicks, [
    { line: 13, ticks: 10 },
    { line: 24, ticks: 8 },
  ]);
  const [format] = named(after, 'format', 2).filter((n) => n.id !== 4);
  assert.ok(format, 'line 28 lies only in format (lib.js), which the handler calls');
  assert.deepEqual(format.positionTicks, [{ line: 28, ticks: 12 }]);
  assert.equal(hits(after, format.id), 12);
});

test("without ranges for the profile's scripts the profile is returned as it is", () => {
  const p = handlerProfile();
  assert.equal(expandInlinedFrames(p, undefined), p);
  assert.equal(expandInlinedFrames(p, {}), p);
  assert.equal(expandInlinedFrames(p, { [LIB]: [['', 0, 0, 9, 0, 1]] }), p);
  assert.equal(
    expandInlinedFrames(p, { [APP]: [['broken' as unknown as string, 'x' as unknown as number, 0, 0, 0, 0]] }),
    p,
    'malformed rows are skipped',
  );
});

// The handler in server.js spans lines 9-17; checksum in lib/etag.js spans 5-16 and was sampled
// un-inlined on lines 9, 10 and 12 (its loop). Once inlined, its lines land on the handler.
const SERVER = 'file:///srv/server.js';
const ETAG = 'file:///srv/lib/etag.js';
const etagRanges: FunctionRanges = {
  [SERVER]: [['catalog', 8, 18, 16, 1, 1]],
  [ETAG]: [
    ['checksum', 4, 0, 15, 1, 1],
    ['etagFor', 17, 0, 19, 1, 1],
  ],
};

function catalogProfile(handlerTicks: { line: number; ticks: number }[], checksumTicks: { line: number; ticks: number }[]): CpuProfile {
  const total = handlerTicks.reduce((s, t) => s + t.ticks, 0);
  const own = checksumTicks.reduce((s, t) => s + t.ticks, 0);
  return profileOf(
    [
      at(1, '(root)', '', -1, -1, [2]),
      at(2, 'catalog', SERVER, 8, 34, [3], { hitCount: total, positionTicks: handlerTicks }),
      at(3, 'etagFor', ETAG, 17, 16, [4]),
      at(4, 'checksum', ETAG, 4, 17, [], { hitCount: own, positionTicks: checksumTicks }),
    ],
    [...many(2, total), ...many(4, own)],
  );
}

test('a callee inlined from another file takes the lines its un-inlined samples share with the caller', () => {
  const after = expandInlinedFrames(
    catalogProfile(
      [
        { line: 9, ticks: 60 },
        { line: 10, ticks: 50 },
        { line: 12, ticks: 200 },
        { line: 16, ticks: 2 },
        { line: 398, ticks: 1 },
      ],
      [
        { line: 9, ticks: 6 },
        { line: 10, ticks: 2 },
        { line: 12, ticks: 9 },
        { line: 15, ticks: 2 },
      ],
    ),
    etagRanges,
  );
  const catalog = after.nodes.find((n) => n.id === 2)!;
  assert.deepEqual(
    catalog.positionTicks,
    [
      { line: 16, ticks: 2 },
      { line: 398, ticks: 1 },
    ],
    'lines checksum was never sampled on stay',
  );
  const [etag] = named(after, 'etagFor', 2).filter((n) => n.id !== 3);
  const [checksum] = named(after, 'checksum', etag.id);
  assert.deepEqual(checksum.positionTicks, [
    { line: 9, ticks: 60 },
    { line: 10, ticks: 50 },
    { line: 12, ticks: 200 },
  ]);
  assert.equal(hits(after, checksum.id), 310);
});

test('one line number in common with a callee is a coincidence: the caller keeps its line', () => {
  const before = catalogProfile(
    [
      { line: 12, ticks: 200 },
      { line: 14, ticks: 30 },
    ],
    [
      { line: 9, ticks: 6 },
      { line: 10, ticks: 2 },
      { line: 12, ticks: 9 },
    ],
  );
  assert.equal(expandInlinedFrames(before, etagRanges), before);
});

test("an app callback inlined into Node's tick queue gets back the ticks on its lines; the queue's own lines and unseen functions' stay", () => {
  const CORE = 'node:internal/process/task_queues';
  // processTicksAndRejections starts at line 71 (0-based); it was seen calling deriveToken (app.js 2-6) un-inlined.
  const queueTicks = [
    { line: 5, ticks: 50 }, // deriveToken's loop, inlined into the queue
    { line: 24, ticks: 7 }, // `unused` covers it, but the queue never called it
    { line: 80, ticks: 3 }, // the queue's own code
  ];
  const p = profileOf(
    [
      at(1, '(root)', '', -1, -1, [2]),
      at(2, 'processTicksAndRejections', CORE, 71, 34, [3], { hitCount: 60, positionTicks: queueTicks }),
      at(3, 'deriveToken', APP, 2, 20, [], { hitCount: 5, positionTicks: [{ line: 5, ticks: 5 }] }),
    ],
    [...many(2, 60), ...many(3, 5)],
  );
  const out = expandInlinedFrames(p, appRanges);
  assert.notEqual(out, p);
  assert.equal(hits(out, 2), 10, 'the unseen function and the own line keep theirs');
  const derive = out.nodes.filter((n) => n.callFrame.functionName === 'deriveToken').map((n) => n.id);
  assert.equal(out.samples.filter((id) => derive.includes(id)).length, 55, 'the seen callee gets its 50 back');
  // A tick line after the queue's start could be its own code: nothing moves.
  const after = profileOf(
    [
      at(1, '(root)', '', -1, -1, [2]),
      at(2, 'processTicksAndRejections', CORE, 1, 34, [3], { hitCount: 60, positionTicks: [{ line: 5, ticks: 60 }] }),
      at(3, 'deriveToken', APP, 2, 20, [], { hitCount: 5, positionTicks: [{ line: 5, ticks: 5 }] }),
    ],
    [...many(2, 60), ...many(3, 5)],
  );
  assert.equal(expandInlinedFrames(after, appRanges), after);
});
