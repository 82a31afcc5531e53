// The sampling core in-process: a blocked loop is seen at once (clock read) and by the next
// tick, window signals (utilization, heap, RSS) trip per window, hysteresis holds, 0 disables,
// close() stops everything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep, setImmediate as nextTurn } from 'node:timers/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { protect, type Protector } from '../../src/protect/index.js';

function busy(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    /* block the loop on purpose */
  }
}

/** Waits until `guard.isUnderPressure()` equals `want`; fails after ~5 s. */
async function until(guard: Protector, want: boolean): Promise<void> {
  for (let i = 0; i < 250; i++) {
    if (guard.isUnderPressure() === want) return;
    await sleep(20);
  }
  assert.fail(`isUnderPressure() stayed ${!want}: ${JSON.stringify(guard.status())}`);
}

test('a loop blocked right now counts at once, and the turn after the block still sheds', async (t) => {
  const guard = protect({ maxEventLoopDelay: 50 });
  t.after(() => guard.close());
  await until(guard, false);
  busy(200);
  assert.equal(guard.isUnderPressure(), true, 'the overdue tick is read from the clock');
  assert.equal(guard.status().reason, 'eventLoopDelay');
  assert.ok(guard.status().eventLoopDelayNow > 50);
  await nextTurn();
  assert.equal(guard.isUnderPressure(), true, 'requests queued during the block are still shed');
  await until(guard, false);
  assert.equal(guard.status().reason, null);
});

test('the delay p99 is per window: a block shows in its window, then rolls out', async (t) => {
  const guard = protect({ maxEventLoopDelay: 0, sampleInterval: 100 });
  t.after(() => guard.close());
  await sleep(150);
  busy(300);
  await sleep(30);
  let seen = 0;
  for (let i = 0; i < 100 && seen < 200; i++) {
    seen = Math.max(seen, guard.status().eventLoopDelay);
    await sleep(10);
  }
  assert.ok(seen >= 200, `the window with the 300 ms block reports it: ${seen}`);
  let now = Infinity;
  for (let i = 0; i < 200 && now >= 100; i++) {
    await sleep(20);
    now = guard.status().eventLoopDelay;
  }
  assert.ok(now < 100, `later windows no longer include it (not cumulative): ${now}`);
  assert.ok(guard.status().sampledAt > 0);
  assert.equal(guard.status().underPressure, false, 'threshold 0: the delay signal is off');
});

test('a delay threshold of 0 disables the delay signal', async (t) => {
  const guard = protect({ maxEventLoopDelay: 0 });
  t.after(() => guard.close());
  busy(150);
  assert.equal(guard.isUnderPressure(), false);
  await nextTurn();
  assert.equal(guard.isUnderPressure(), false);
});

test('utilization is judged per window, not since start', async (t) => {
  const guard = protect({ maxEventLoopDelay: 0, maxEventLoopUtilization: 0.7, sampleInterval: 100 });
  t.after(() => guard.close());
  await until(guard, false);
  // Keep the loop busy across whole windows, yielding so the sampling timer can run.
  const end = Date.now() + 400;
  while (Date.now() < end) {
    busy(30);
    await nextTurn();
  }
  assert.equal(guard.isUnderPressure(), true, JSON.stringify(guard.status()));
  assert.equal(guard.status().reason, 'eventLoopUtilization');
  assert.ok(guard.status().eventLoopUtilization > 0.7);
  await until(guard, false);
});

test('heap and RSS limits trip with their own reason', async (t) => {
  const heap = protect({ maxEventLoopDelay: 0, maxHeapUsedBytes: 1024, sampleInterval: 20 });
  const rss = protect({ maxEventLoopDelay: 0, maxRssBytes: 1024, sampleInterval: 20 });
  const roomy = protect({ maxEventLoopDelay: 0, maxHeapUsedBytes: 2 ** 50, maxRssBytes: 2 ** 50, sampleInterval: 20 });
  t.after(() => {
    heap.close();
    rss.close();
    roomy.close();
  });
  await until(heap, true);
  await until(rss, true);
  assert.equal(heap.status().reason, 'heapUsedBytes');
  assert.equal(rss.status().reason, 'rssBytes');
  assert.ok(heap.status().heapUsedBytes > 1024);
  assert.equal(roomy.isUnderPressure(), false);
});

test('hysteresis keeps shedding until the signal stayed low for recoveryTime', async (t) => {
  const plain = protect({ maxEventLoopDelay: 80 });
  const held = protect({ maxEventLoopDelay: 80, recoveryTime: 400 });
  t.after(() => {
    plain.close();
    held.close();
  });
  await until(plain, false);
  await until(held, false);
  busy(250);
  await until(plain, false); // without hysteresis the guard lets go once the loop is on time
  assert.equal(held.isUnderPressure(), true, 'with hysteresis it holds for 400 ms of on-time ticks');
  await until(held, false);
});

test('close() stops sampling, and a closed guard sheds nothing', async () => {
  const guard = protect({ maxEventLoopDelay: 20, maxHeapUsedBytes: 1024, sampleInterval: 20 });
  await until(guard, true);
  guard.close();
  guard.close();
  busy(100);
  assert.equal(guard.isUnderPressure(), false);
  assert.equal(guard.status().underPressure, false);
});

test('time spent answering shed requests is not counted as event-loop delay', async (t) => {
  const slowAnswer = protect({ maxEventLoopDelay: 50, onPressure: () => busy(150) });
  t.after(() => slowAnswer.close());
  await until(slowAnswer, false);
  const req = { url: '/', headers: {} } as IncomingMessage;
  slowAnswer.respond(req, {} as ServerResponse, 'eventLoopDelay');
  assert.equal(slowAnswer.isUnderPressure(), false, 'the 150 ms went to shedding, not to work');
  await nextTurn();
  assert.equal(slowAnswer.isUnderPressure(), false, 'the next tick discounts it too');
  busy(150);
  assert.equal(slowAnswer.isUnderPressure(), true, 'the same 150 ms of work does count');
});
