// Answers counted by lines (hooks/answer-lines.ts) on synthetic chunk sequences: a line protocol
// whose store answers two commands in one chunk, a burst of writes before the first answer, a
// line split over two chunks, and the protocols that must stay paired by size (Redis' bulk
// strings, a binary protocol).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answersByLines, linesIn, newAnswerLines, LINES_LEARN_CHUNKS, type AnswerLines } from '../../../src/agent/hooks/answer-lines.js';
import { countAnswer, countWrite, isMultiWrite, newLearningCounts, LEARN_PAIRS } from '../../../src/agent/hooks/socket-waits.js';

const b = (s: string) => Buffer.from(s, 'latin1');

const counts = new WeakMap<AnswerLines, { made: number; waiting: number }>();

/** Feeds chunks to a socket's lines, each after `writes` more writes, returning the answers read in each (by size: one). */
function feed(l: AnswerLines, steps: { writes: number; chunk: string }[]): (number | undefined)[] {
  const c = counts.get(l) ?? { made: 0, waiting: 0 };
  counts.set(l, c);
  return steps.map(({ writes, chunk }) => {
    c.made += writes;
    c.waiting += writes;
    const n = answersByLines(l, b(chunk), c.waiting, c.made);
    c.waiting -= Math.min(c.waiting, n ?? 1);
    return n;
  });
}

test('lines in a chunk: those that start in it, a line begun in the chunk before not counted again', () => {
  assert.deepEqual(linesIn(b('VAL 1\r\nVAL 2\r\n'), true), { starts: 2, endsLine: true });
  assert.deepEqual(linesIn(b('VAL 1\r\nVA'), true), { starts: 2, endsLine: false });
  assert.deepEqual(linesIn(b('L 2\r\n'), false), { starts: 0, endsLine: true });
  assert.deepEqual(linesIn('+OK\r\n', true), { starts: 1, endsLine: true });
  assert.equal(linesIn(b(''), true), undefined);
  assert.equal(linesIn({ byteLength: 3 }, true), undefined);
});

test('a line protocol whose store answers two commands in one chunk: two answers, whatever their sizes', () => {
  const l = newAnswerLines();
  const steps = [];
  for (let i = 0; i < LINES_LEARN_CHUNKS + 4; i++) steps.push({ writes: 2, chunk: 'VAL 28\r\nVAL 2899\r\n' });
  const answers = feed(l, steps);
  assert.deepEqual(new Set(answers), new Set([2]));
  assert.equal(l.decided, true);
});

test('40 writes before the first answer, answers one to three a chunk: each chunk answers its lines, not every write waiting', () => {
  const l = newAnswerLines();
  const answers = feed(l, [
    { writes: 40, chunk: 'VAL 28\r\n' },
    { writes: 0, chunk: 'VAL 2899\r\nVAL 28\r\n' },
    { writes: 2, chunk: 'VAL 28\r\nVAL 28\r\nVAL 2899\r\n' },
  ]);
  assert.deepEqual(answers, [1, 2, 3]);
});

test('a long line split over two chunks is one answer, begun in the first', () => {
  const l = newAnswerLines();
  const steps = [];
  for (let i = 0; i < 2 * LINES_LEARN_CHUNKS; i++)
    steps.push({ writes: i % 8 === 1 ? 0 : 1, chunk: i % 8 === 0 ? '{"rows":[1,2' : i % 8 === 1 ? ',3]}\n' : '{"ok":1}\n' });
  // Learning: once a chunk ended no line, the learning chunks are paired by size.
  assert.deepEqual(feed(l, steps.slice(0, 2)), [undefined, 0]);
  feed(l, steps.slice(2));
  assert.equal(l.decided, true, JSON.stringify(l));
  // Decided: the chunk that ends the line answers no new command.
  assert.deepEqual(feed(l, steps.slice(0, 3)), [1, 0, 1]);
});

test('Redis bulk strings (two lines an answer) and a binary protocol are paired by size', () => {
  const bulk = newAnswerLines();
  assert.deepEqual(feed(bulk, [{ writes: 1, chunk: '$5\r\nhello\r\n' }]), [undefined]);
  assert.equal(bulk.decided, false);
  const binary = newAnswerLines();
  const steps = [];
  for (let i = 0; i < LINES_LEARN_CHUNKS; i++)
    steps.push({ writes: 1, chunk: 'T\x00\x00\x00\x1brow\nD\x00\x00\x00\x0bZ\x00\x00\x00\x05I' });
  assert.ok(feed(binary, steps).every((n) => n === undefined));
  assert.equal(binary.decided, false);
});

test('two commands started together from different lines, a line protocol answering both in one chunk: two commands, not one multi-write command', () => {
  const l = newLearningCounts();
  for (let r = 0; r < LEARN_PAIRS; r++) {
    countWrite(l, false, false);
    countWrite(l, true, true);
    countAnswer(l, 2);
  }
  countWrite(l, false, false);
  assert.equal(l.oneCommand, 0);
  assert.equal(isMultiWrite(l), false);
});
