// The agent's event-loop delay timer: an idle loop reads near zero, a block reads as its length.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { LoopDelay, LOOP_DELAY_RESOLUTION_MS, loopTick } from '../../../src/agent/collectors/loop-delay.js';

function block(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test('an idle loop has small delays, one per timer period', async () => {
  const d = new LoopDelay();
  d.start();
  try {
    await sleep(10 * LOOP_DELAY_RESOLUTION_MS);
    const s = d.take();
    // Ten periods: about ten fires (fewer on a busy machine, never many more).
    assert.ok(s.count >= 3 && s.count <= 12, `count ${s.count}`);
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
    // At least one more fire after the late one, so the block is not the only delay.
    await sleep(LOOP_DELAY_RESOLUTION_MS + 30);
    const s = d.take();
    // The timer is late by the block less the part of its period already gone when the block began.
    assert.ok(s.max >= 200 - LOOP_DELAY_RESOLUTION_MS - 5 && s.max <= 260, `max ${s.max}`);
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

test('a tick rides on the delay timer: it runs every n periods, after the delay is recorded, with no timer of its own', async () => {
  const d = new LoopDelay();
  const seen: number[] = [];
  const tick = loopTick(2 * LOOP_DELAY_RESOLUTION_MS, () => seen.push(d.take().count));
  assert.ok(tick);
  assert.equal(tick.every, 2);
  d.start([tick]);
  try {
    await sleep(9 * LOOP_DELAY_RESOLUTION_MS);
    // Each tick finds the fires since the last one in the histogram, its own included.
    assert.ok(seen.length >= 2 && seen.length <= 5, `${seen.length} ticks`);
    // Two fires a tick on a calm loop; one where a late fire already passed the period.
    for (const count of seen.slice(1)) assert.ok(count >= 1 && count <= 3, String(seen));
  } finally {
    d.stop();
  }
  const ticks = seen.length;
  await sleep(3 * LOOP_DELAY_RESOLUTION_MS);
  assert.equal(seen.length, ticks, 'stop() ends the tick too');
});

test('a tick is due by the clock, not by fires: a loop blocked between fires still gets it every period', async () => {
  const d = new LoopDelay();
  const at: number[] = [];
  // Every 4 periods (200 ms); the loop is then blocked 250 ms at a time, so the timer fires once
  // per block: counted in fires, the tick would come once a second at most.
  const tick = loopTick(4 * LOOP_DELAY_RESOLUTION_MS, () => at.push(Date.now()));
  assert.ok(tick);
  d.start([tick]);
  const start = Date.now();
  try {
    while (Date.now() - start < 1600) {
      const until = Date.now() + 250;
      while (Date.now() < until) {
        /* blocked */
      }
      await sleep(1);
    }
  } finally {
    d.stop();
  }
  assert.ok(at.length >= 4, `${at.length} ticks in 1.6 s of 250 ms blocks`);
});

test('an interval that is not a whole number of delay periods gets no tick (the caller keeps its own timer)', () => {
  assert.equal(loopTick(LOOP_DELAY_RESOLUTION_MS + 1, () => {})?.every, undefined);
  assert.equal(
    loopTick(LOOP_DELAY_RESOLUTION_MS / 2, () => {}),
    undefined,
  );
  assert.equal(loopTick(LOOP_DELAY_RESOLUTION_MS, () => {})?.every, 1);
  assert.equal(loopTick(1000, () => {})?.every, 1000 / LOOP_DELAY_RESOLUTION_MS);
});

test('the batch runs around the ticks of a fire that has one due, once per such fire, and not on the others', async () => {
  const d = new LoopDelay();
  const log: string[] = [];
  const tick = loopTick(2 * LOOP_DELAY_RESOLUTION_MS, () => log.push('tick'));
  assert.ok(tick);
  d.start([tick], { before: () => log.push('before'), after: () => log.push('after') });
  try {
    await sleep(9 * LOOP_DELAY_RESOLUTION_MS);
  } finally {
    d.stop();
  }
  const ticks = log.filter((x) => x === 'tick').length;
  assert.ok(ticks >= 2, log.join(' '));
  // Every tick inside its own before/after, and no before/after without a tick.
  assert.deepEqual(log, Array.from({ length: ticks }, () => ['before', 'tick', 'after']).flat());
});
