import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallSite } from '../../../src/agent/protocol.js';
import { MAX_VARIANTS, commonStack, newVariants, noteVariant } from '../../../src/agent/hooks/stack-variants.js';

const at = (fn: string, line: number): CallSite => ({ function: fn, file: '/srv/app/lib/executor.mjs', line, column: 1 });
const query = at('query', 4);

test('stack variants: a site reached once by one path and thirty times by another keeps the common path', () => {
  // A GraphQL-like executor: the list query once per request, then one customer query per order.
  const list = [query, at('recentOrders', 6), at('resolveObject', 10), at('execute', 3)];
  const perItem = [query, at('customer', 12), at('resolveObject', 10), at('resolveList', 20)];
  const v = newVariants();
  assert.equal(noteVariant(v, list), list, 'the only path seen so far');
  let kept: CallSite[] = list;
  for (let i = 0; i < 30; i++) kept = noteVariant(v, perItem);
  assert.equal(kept, perItem);
  assert.equal(commonStack(v), perItem);
});

test('stack variants: of paths seen as often, the shorter (a loop re-arming its timer from a resumed async function)', () => {
  const start = [query, at('poll', 8), at('startPolling', 2), at('main', 1)];
  const rearm = [query, at('poll', 8)];
  const v = newVariants();
  noteVariant(v, start);
  assert.equal(noteVariant(v, rearm), rearm);
});

test('stack variants: bounded paths per site; later paths are not kept', () => {
  const v = newVariants();
  for (let i = 0; i < MAX_VARIANTS + 3; i++) noteVariant(v, [query, at(`caller${i}`, i + 1)]);
  assert.equal(v.keys.length, MAX_VARIANTS);
  assert.equal(v.stacks.length, MAX_VARIANTS);
});
