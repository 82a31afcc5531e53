// How a socket's first writes tell a client that writes one command as several writes (Postgres'
// Parse, Bind, Execute, Sync, answered once) from commands the app starts together from different
// lines (`Promise.all([get(a), set(b)])`, each answered): the learning's counts on synthetic
// sequences of writes and answer chunks (hooks/socket-waits.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  countAnswer,
  countWrite,
  isMultiWrite,
  newLearningCounts,
  LEARN_PAIRS,
  type LearningCounts,
} from '../../../src/agent/hooks/socket-waits.js';

/**
 * `runs` runs of `writes` writes made in one turn from different code, each followed by `chunks`
 * answer chunks; the counts after the first write of the run after the last.
 */
function learn(runs: number, writes: number, chunks: number | ((run: number) => number)): LearningCounts {
  const l = newLearningCounts();
  for (let r = 0; r < runs; r++) {
    for (let w = 0; w < writes; w++) countWrite(l, w > 0, w > 0);
    const n = typeof chunks === 'number' ? chunks : chunks(r);
    for (let c = 0; c < n; c++) countAnswer(l);
  }
  countWrite(l, false, false);
  return l;
}

test('a command written as four writes and answered once is one command', () => {
  const l = learn(3, 4, 1);
  assert.equal(l.pairs, 9);
  assert.equal(l.oneCommand, 9);
  assert.equal(isMultiWrite(l), true);
});

test('two commands started together from different lines, each answered by its own chunk, are two commands', () => {
  const l = learn(LEARN_PAIRS, 2, 2);
  assert.equal(l.pairs, LEARN_PAIRS);
  assert.equal(l.oneCommand, 0);
  assert.equal(isMultiWrite(l), false);
});

test('three commands started together, answered by more chunks than writes (answers split), are three commands', () => {
  assert.equal(isMultiWrite(learn(4, 3, 5)), false);
});

test('commands started together whose answers come back in one chunk are not told apart (one command, as before)', () => {
  assert.equal(isMultiWrite(learn(LEARN_PAIRS, 2, 1)), true);
});

test('a few runs answered apart among one-command runs: the share decides', () => {
  // 10 runs of 4 writes (30 pairs), one of them answered by 4 chunks (a long result): 27 of 30 pairs still one command's.
  const one = learn(10, 4, (r) => (r === 4 ? 4 : 1));
  assert.equal(one.oneCommand, 27);
  assert.equal(isMultiWrite(one), true);
  // Half the runs answered apart: not one command.
  assert.equal(isMultiWrite(learn(10, 4, (r) => (r % 2 === 0 ? 4 : 1))), false);
});

test('writes with answers between are no pairs; the run in progress counts as one command until its answers come', () => {
  const l = newLearningCounts();
  for (let i = 0; i < 10; i++) {
    countWrite(l, false, false);
    countAnswer(l);
  }
  assert.equal(l.pairs, 0);
  assert.equal(isMultiWrite(l), false);
  countWrite(l, true, true);
  assert.deepEqual([l.pairs, l.oneCommand, l.run], [1, 1, 2]);
});
