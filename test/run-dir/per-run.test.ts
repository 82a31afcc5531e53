// perRun and perRunAndKey: the one cache of what is computed from a run (src/run-dir/per-run.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { perRun, perRunAndKey } from '../../src/run-dir/per-run.js';

test('perRun computes once per run, undefined included, and apart for another run', () => {
  let calls = 0;
  const of = perRun((run: { n: number }) => {
    calls++;
    return run.n > 0 ? run.n * 2 : undefined;
  });
  const a = { n: 2 },
    b = { n: 0 };
  assert.equal(of(a), 4);
  assert.equal(of(a), 4);
  assert.equal(of(b), undefined);
  assert.equal(of(b), undefined);
  assert.equal(calls, 2);
});

test('perRunAndKey computes once per run and key, and keeps a throw: the second reader gets it without a second try', () => {
  const tried: string[] = [];
  const read = perRunAndKey((run: { dir: string }, key: string) => {
    tried.push(`${run.dir}/${key}`);
    if (key === 'bad') throw Object.assign(new Error('unreadable'), { code: 'HOTPATH_ERR_PROFILE' });
    return { key };
  });
  const run = { dir: 'r1' };
  assert.equal(read(run, 'cpu'), read(run, 'cpu'), 'the same value');
  assert.throws(() => read(run, 'bad'), { code: 'HOTPATH_ERR_PROFILE' });
  assert.throws(() => read(run, 'bad'), { code: 'HOTPATH_ERR_PROFILE' });
  assert.notEqual(read({ dir: 'r2' }, 'cpu'), read(run, 'cpu'), 'another run computes its own');
  assert.deepEqual(tried, ['r1/cpu', 'r1/bad', 'r2/cpu']);
});
