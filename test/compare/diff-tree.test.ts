import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffTree, DIFF_MIN_SHARE } from '../../src/compare/diff-tree.js';
import type { CallTree, Frame, FrameKind } from '../../src/profile/call-tree.js';

/** A call tree from paths of "name@file:line/kind" frames with their self µs. */
function tree(paths: [string[], number][]): CallTree {
  const frames: Frame[] = [{ name: '(root)', file: '', line: 0, column: 0, kind: 'program' }];
  const frameIds = new Map<string, number>();
  const parent = [-1];
  const frame = [0];
  const self = [0];
  const kids = new Map<string, number>();
  for (const [path, us] of paths) {
    let node = 0;
    for (const spec of path) {
      const [, name, file, line, kind] = /^(.*)@(.*):(\d+)\/(.*)$/.exec(spec)!;
      const key = `${name}@${file}:${line}/${kind}`;
      if (!frameIds.has(key)) {
        frameIds.set(key, frames.length);
        frames.push({ name, file, line: Number(line), column: 1, kind: kind as FrameKind });
      }
      const k = `${node}:${frameIds.get(key)}`;
      if (!kids.has(k)) {
        kids.set(k, parent.length);
        parent.push(node);
        frame.push(frameIds.get(key)!);
        self.push(0);
      }
      node = kids.get(k)!;
    }
    self[node] += us;
  }
  return { frames, frame: Int32Array.from(frame), parent: Int32Array.from(parent), self: Float64Array.from(self) } as unknown as CallTree;
}

const totals = (d: ReturnType<typeof diffTree>, side: 'selfBefore' | 'selfAfter') => d[side].reduce((a, b) => a + b, 0);
const find = (d: ReturnType<typeof diffTree>, name: string) => d.frame.flatMap((f, i) => (f >= 0 && d.frames.name[f] === name ? [i] : []));

test('diffTree merges both runs by call path (lines may move), per completed request, without idle time', () => {
  const before = tree([
    [['main@app.js:1/app', 'login@app.js:10/app', 'pbkdf2Sync@node:crypto:5/node-core'], 30_000],
    [['main@app.js:1/app', 'render@app.js:20/app'], 10_000],
    [['(idle)@:0/idle'], 50_000],
  ]);
  const after = tree([
    [['main@app.js:1/app', 'login@app.js:12/app', 'pbkdf2@node:crypto:9/node-core'], 2_000],
    [['main@app.js:1/app', 'render@app.js:22/app'], 20_000],
  ]);
  const d = diffTree(before, 10, after, 20);
  assert.deepEqual(find(d, 'login').length, 1, 'login matched across a moved line');
  assert.deepEqual(find(d, '(idle)'), []);
  const at = (name: string) => find(d, name)[0];
  assert.deepEqual([d.selfBefore[at('pbkdf2Sync')], d.selfAfter[at('pbkdf2Sync')]], [3000, 0]);
  assert.deepEqual([d.selfBefore[at('pbkdf2')], d.selfAfter[at('pbkdf2')]], [0, 100]);
  assert.deepEqual([d.selfBefore[at('render')], d.selfAfter[at('render')]], [1000, 1000], 'twice the time over twice the requests');
  for (let i = 1; i < d.parent.length; i++) assert.ok(d.parent[i] < i);
  assert.equal(totals(d, 'selfBefore'), 4000);
  assert.equal(totals(d, 'selfAfter'), 1100);
});

test('diffTree folds paths under the minimum share into their caller, keeping the totals whole', () => {
  const tiny = (100_000 * DIFF_MIN_SHARE) / 4;
  const before = tree([
    [['main@app.js:1/app', 'work@app.js:5/app'], 100_000],
    [['main@app.js:1/app', 'blip@app.js:9/app'], tiny],
  ]);
  const after = tree([[['main@app.js:1/app', 'work@app.js:5/app'], 90_000]]);
  const d = diffTree(before, 1, after, 1);
  assert.deepEqual(find(d, 'blip'), []);
  assert.equal(d.selfBefore[find(d, 'main')[0]], tiny);
  assert.equal(totals(d, 'selfBefore'), 100_000 + tiny);
});
