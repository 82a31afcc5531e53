import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MID_LOAD_GC_MAX_HEAP_BYTES, MidLoadGc } from '../../../src/agent/profiling/mid-load-gc.js';
import { oldGenerationUsed } from '../../../src/agent/collectors/full-gc-canary.js';

test('mid-load GC: forced once at the middle of the load when V8 ran no full GC since 30 % of it; the heap it left is read', () => {
  const m = new MidLoadGc();
  m.arm(1000, 3500);
  // Before the middle nothing happens, whatever the GCs (before 30 % of the load, 2500, they do not count).
  assert.equal(
    m.observe(2000, 3, () => 1),
    undefined,
  );
  assert.equal(
    m.observe(3000, 0, () => 1),
    undefined,
  );
  // A real full GC of this process.
  const forced = m.observe(3600, 0, oldGenerationUsed);
  assert.ok(forced, 'forced at the middle');
  assert.ok(forced.durationMs >= 0 && forced.start > 0);
  assert.ok(forced.heapAfter > 0 && forced.heapAfter === Math.round(forced.heapAfter));
  assert.equal(
    m.observe(3700, 0, () => 1),
    undefined,
    'once',
  );
});

test('mid-load GC: none when V8 ran a full GC of its own from 30 % of the load on, when the heap is large, or without a known middle', () => {
  const own = new MidLoadGc();
  own.arm(1000, 3500);
  own.observe(2500, 1, () => 1);
  assert.equal(
    own.observe(3600, 0, () => 1),
    undefined,
  );
  const large = new MidLoadGc();
  large.arm(1000, 3500);
  assert.equal(
    large.observe(3600, 0, () => MID_LOAD_GC_MAX_HEAP_BYTES + 1),
    undefined,
  );
  const unknown = new MidLoadGc();
  unknown.arm(1000, undefined);
  assert.equal(
    unknown.observe(9e12, 0, () => 1),
    undefined,
  );
  const stopped = new MidLoadGc();
  stopped.arm(1000, 3500);
  stopped.disarm();
  assert.equal(
    stopped.observe(3600, 0, () => 1),
    undefined,
  );
});

test('mid-load GC: --expose-gc is set only to take the gc function (the app sees no global gc)', () => {
  const m = new MidLoadGc();
  m.arm(0, 1);
  assert.ok(m.observe(2, 0, oldGenerationUsed));
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined');
});
