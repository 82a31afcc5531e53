// The GC observation windows driven by the thread agent's loop-delay timer (start's driverMs): no
// timer of their own, a window closed at the driver's fire, the time it was on measured.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { GC_MIN_WINDOW_MS, GcCollector } from '../../../src/agent/collectors/gc-collector.js';

test('a driven window stays open until the driver fires (no timer of its own closes it); a new period reopens it', async () => {
  const gc = new GcCollector();
  gc.start(GC_MIN_WINDOW_MS);
  try {
    // The first window is the shortest (one fire of a 50 ms driver), but only a fire closes it.
    await sleep(3 * GC_MIN_WINDOW_MS);
    const open = gc.takeInterval().observedMs;
    assert.ok(open >= 2.5 * GC_MIN_WINDOW_MS, `on ${open} ms with no fire`);
    gc.driverFired();
    gc.takeInterval(); // the moments until the close
    await sleep(60);
    assert.equal(gc.takeInterval().observedMs, 0, 'closed at the fire: no time observed since');
    // No GC seen: the next period's window is the whole period, which no fire closes.
    gc.nextPeriod();
    for (let i = 0; i < 5; i++) gc.driverFired();
    await sleep(40);
    assert.ok(gc.takeInterval().observedMs >= 35, 'open for the whole period');
  } finally {
    gc.stop();
  }
});

test('without a driver the shortest window closes on its own timer', async () => {
  const gc = new GcCollector();
  gc.start();
  try {
    let closed = false;
    for (const end = Date.now() + 3000; Date.now() < end && !closed;) {
      gc.takeInterval();
      await sleep(60);
      closed = gc.takeInterval().observedMs === 0;
    }
    assert.ok(closed, 'the window closed itself');
  } finally {
    gc.stop();
  }
});
