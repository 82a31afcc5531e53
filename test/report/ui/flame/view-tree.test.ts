// The flame views' tree arithmetic on small hand-made profiles: layout order and offsets,
// hiding layers (merge vs remove), inverted, callers and callees (recursion counted once),
// time windows over samples, and the search share.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildViewTree, type ViewOptions } from '../../../../src/report/ui/flame/view-tree.js';
import type { ViewTree } from '../../../../src/report/ui/flame/tree-builder.js';
import { decodeProfile, selfWeights, type ProfileModel } from '../../../../src/report/ui/flame/profile-model.js';
import { matchedShare, matchFrames, compileQuery } from '../../../../src/report/ui/flame/flame-search.js';
import { FRAME_KINDS } from '../../../../src/profile/call-tree.js';
import type { PayloadProfile } from '../../../../src/report/html/report-payload.js';

const K = (k: (typeof FRAME_KINDS)[number]): number => FRAME_KINDS.indexOf(k);

/** frames: [name, kind]; nodes: [parent, frame]; frame 0 is the root. */
function model(
  frames: [string, string][],
  nodes: [number, number][],
  samples?: { node: number[]; dt: number[]; lastWeight: number },
): ProfileModel {
  const strings = [...new Set(frames.map((f) => f[0])), ''];
  const p: PayloadProfile = {
    id: 't',
    kind: 'cpu',
    pid: 1,
    threadId: 0,
    label: 't',
    unit: 'us',
    strings,
    frames: {
      name: frames.map((f) => strings.indexOf(f[0])),
      file: frames.map(() => strings.length - 1),
      line: frames.map(() => 0),
      col: frames.map(() => 0),
      kind: frames.map((f) => K(f[1] as (typeof FRAME_KINDS)[number])),
    },
    nodes: { parent: nodes.map((n) => n[0]), frame: nodes.map((n) => n[1]) },
    ...(samples ? { samples } : {}),
    startSec: 10,
    notes: [],
  };
  return decodeProfile(p);
}

/** The tree as "name:total" lines indented by depth, in layout order. */
function shape(m: ProfileModel, t: ViewTree): string[] {
  const out: string[] = [];
  for (let i = 0; i < t.n; i++) out.push(`${'  '.repeat(t.depth[i])}${t.frame[i] < 0 ? 'all' : m.frameName[t.frame[i]]}:${t.total[i]}`);
  return out;
}

//  root ─ A(app, 10) ─ B(core, 5) ─ C(app, 20)
//       │            └ C(app, 1)
//       ├ G(gc, 7)
//       └ I(idle, 100)
const FRAMES: [string, string][] = [
  ['(root)', 'program'],
  ['A', 'app'],
  ['B', 'node-core'],
  ['C', 'app'],
  ['G', 'gc'],
  ['I', 'idle'],
];
const NODES: [number, number][] = [
  [-1, 0],
  [0, 1],
  [1, 2],
  [2, 3],
  [1, 3],
  [0, 4],
  [0, 5],
];
const SELF = Float64Array.from([0, 10, 5, 20, 1, 7, 100]);
const m = model(FRAMES, NODES);
const none: ViewOptions = { mode: 'flame', hidden: new Set() };

describe('buildViewTree', () => {
  it('lays the flame tree out heaviest first with offsets and subtree sizes', () => {
    const t = buildViewTree(m, SELF, none);
    assert.deepEqual(shape(m, t), ['all:143', '  I:100', '  A:36', '    B:25', '      C:20', '    C:1', '  G:7']);
    assert.deepEqual(Array.from(t.x), [0, 0, 100, 100, 100, 125, 136]);
    assert.deepEqual(Array.from(t.size), [7, 1, 4, 2, 1, 1, 1]);
    assert.equal(t.maxDepth, 3);
  });

  it('hiding a code layer merges its frames into their callers and keeps the time', () => {
    const t = buildViewTree(m, SELF, { ...none, hidden: new Set([K('node-core')]) });
    assert.deepEqual(shape(m, t), ['all:143', '  I:100', '  A:36', '    C:21', '  G:7']);
    assert.equal(t.self[2], 15, "B's self time is charged to A");
  });

  it('hiding gc or idle removes their time', () => {
    const t = buildViewTree(m, SELF, { ...none, hidden: new Set([K('gc'), K('idle')]) });
    assert.deepEqual(shape(m, t), ['all:36', '  A:36', '    B:25', '      C:20', '    C:1']);
  });

  it('hiding app frames moves their callees up to the nearest shown caller', () => {
    const t = buildViewTree(m, SELF, { ...none, hidden: new Set([K('app'), K('idle')]) });
    assert.deepEqual(shape(m, t), ['all:43', '  B:25', '  G:7']);
    assert.equal(t.self[0], 11, 'root keeps the self time of hidden top frames');
  });

  it('inverts the tree: where time was spent on top, its callers below', () => {
    const t = buildViewTree(m, SELF, { ...none, mode: 'inverted', hidden: new Set([K('idle')]) });
    assert.deepEqual(shape(m, t), ['all:43', '  C:21', '    B:20', '      A:20', '    A:1', '  A:10', '  G:7', '  B:5', '    A:5']);
  });

  it('shows the callers and the callees of one function', () => {
    const callers = buildViewTree(m, SELF, { ...none, mode: 'callers', focusFrame: 3 });
    assert.deepEqual(shape(m, callers), ['C:21', '  B:20', '    A:20', '  A:1']);
    const callees = buildViewTree(m, SELF, { ...none, mode: 'callees', focusFrame: 1 });
    assert.deepEqual(shape(m, callees), ['A:36', '  B:25', '    C:20', '  C:1']);
  });

  it('leaves the callers of frames too light to be seen unexpanded in the inverted view', () => {
    // root ─ A(1e6)   root ─ B ─ C(1): C is under 1/20000 of the time.
    const r = model(
      [
        ['(root)', 'program'],
        ['A', 'app'],
        ['B', 'app'],
        ['C', 'app'],
      ],
      [
        [-1, 0],
        [0, 1],
        [0, 2],
        [2, 3],
      ],
    );
    const t = buildViewTree(r, Float64Array.from([0, 1e6, 0, 1]), { ...none, mode: 'inverted' });
    assert.deepEqual(shape(r, t), ['all:1000001', '  A:1000000', '  C:1']);
    const heavier = buildViewTree(r, Float64Array.from([0, 1e3, 0, 1]), { ...none, mode: 'inverted' });
    assert.deepEqual(shape(r, heavier), ['all:1001', '  A:1000', '  C:1', '    B:1']);
  });

  it('counts a recursive function once in its callers and callees views', () => {
    // root ─ X(1) ─ X(2) ─ Y(3)
    const r = model(
      [
        ['(root)', 'program'],
        ['X', 'app'],
        ['Y', 'deps'],
      ],
      [
        [-1, 0],
        [0, 1],
        [1, 1],
        [2, 2],
      ],
    );
    const self = Float64Array.from([0, 1, 2, 3]);
    assert.deepEqual(shape(r, buildViewTree(r, self, { ...none, mode: 'callees', focusFrame: 1 })), ['X:6', '  X:5', '    Y:3']);
    assert.deepEqual(shape(r, buildViewTree(r, self, { ...none, mode: 'callers', focusFrame: 1 })), ['X:6']);
    const t = buildViewTree(r, self, none);
    const test = compileQuery('x');
    assert.ok(test);
    assert.equal(matchedShare(t, matchFrames(r.frameName, r.frameFile, test)), 1, 'outermost matches only');
  });
});

describe('selfWeights', () => {
  // Samples at 10.001, 10.003, 10.006 s (dt in µs), each weighing the gap to the next.
  const s = model(FRAMES, NODES, { node: [1, 3, 3], dt: [1000, 2000, 3000], lastWeight: 4000 });

  it('weighs each sample by the time until the next one', () => {
    assert.deepEqual(Array.from(s.sampleTime), [10.001, 10.003, 10.006]);
    assert.deepEqual(Array.from(selfWeights(s, null)), [0, 2000, 0, 7000, 0, 0, 0]);
  });

  it('sums only the samples inside a time window', () => {
    assert.deepEqual(Array.from(selfWeights(s, { from: 10.002, to: 10.004 })), [0, 0, 0, 3000, 0, 0, 0]);
    assert.deepEqual(Array.from(selfWeights(s, { from: 11, to: 12 })), [0, 0, 0, 0, 0, 0, 0]);
  });
});

describe('compileQuery', () => {
  it('matches substrings case-insensitively and /regular expressions/', () => {
    assert.equal(compileQuery('  '), null);
    assert.equal(compileQuery('HASH')?.('hashWork'), true);
    assert.equal(compileQuery('/^hash/')?.('rehash'), false);
    assert.equal(compileQuery('/(/'), undefined, 'an invalid regex is reported, not thrown');
  });
});
