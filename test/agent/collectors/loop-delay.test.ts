// The agent's event-loop delay timer: an idle loop reads near zero, a block reads as its length.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { LoopDelay, LOOP_DELAY_RESOLUTION_MS } from '../../../src/agent/collectors/loop-delay.js';

function block(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test('an idle loop has small delays, one per timer period', async () => {
  const d = new LoopDelay();
  d.start();
  try {
    await sleep(300);
    const s = d.take();
    // 300 ms at a 10 ms period: about 30 fires (fewer on a busy machine, never many more).
    assert.ok(s.count >= 5 && s.count <= 300 / LOOP_DELAY_RESOLUTION_MS + 2, `count ${s.count}`);
    assert.ok(s.min >= 0 && s.p50 < 20, JSON.stringify(s));
  } finally {
    d.stop();
  }
});

test('a 200 ms block shows as one delay of about 200 ms, and take() resets', async () => {
  const d = new LoopDelay();
  d.start();
  try {
    await sleep(50);
    d.take();
    block(200);
    await sleep(30);
    const s = d.take();
    assert.ok(s.max >= 185 && s.max <= 260, `max ${s.max}`);
    assert.ok(s.p50 < s.max, JSON.stringify(s));
    const after = d.take();
    assert.ok(after.max < 150, `after reset: ${JSON.stringify(after)}`);
  } finally {
    d.stop();
  }
});

test('stop() ends the timer: nothing is recorded afterwards and nothing keeps the process alive', async () => {
  const d = new LoopDelay();
  d.start();
  d.stop();
  d.take();
  await sleep(50);
  assert.equal(d.take().count, 0);
});
