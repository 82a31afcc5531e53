import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CALL_COUNT_GAP_MS,
  CALL_COUNT_MS,
  CALL_COUNT_TAIL_MS,
  callCountLoadMs,
  callCountWindow,
  loopBusyEnough,
} from '../../src/run/call-count-window.js';

test('call-count window: after the measured load, and the unmeasured load runs until it is read', () => {
  const w = callCountWindow(1_000_000, 5000);
  assert.deepEqual(w, { from: 1_005_000 + CALL_COUNT_GAP_MS, until: 1_005_000 + CALL_COUNT_GAP_MS + CALL_COUNT_MS });
  // The measured load ended 80 ms late: the extra load still covers the window and its tail.
  assert.equal(callCountLoadMs(w!, 1_005_080), CALL_COUNT_GAP_MS + CALL_COUNT_MS + CALL_COUNT_TAIL_MS - 80);
  assert.ok(callCountLoadMs(w!, w!.until + CALL_COUNT_TAIL_MS + 1) < 0, 'a window already over asks for no load');
  assert.equal(callCountWindow(1_000_000, 0), undefined);
});

test('call-count window: only a loop busy at least half the load gets the extra load', () => {
  const readings = (elus: number[], from: number) => elus.map((elu, i) => ({ t: from + i * 100, elu }));
  const idleBefore = readings([1, 1, 1], 0); // busy before the load (start-up) counts for nothing
  const quiet = { loop: [...idleBefore, ...readings([0.2, 0.3, 0.25], 1000)] };
  const busy = { loop: readings([0.4, 0.7, 0.6], 1000) };
  assert.equal(loopBusyEnough([quiet], 1000), false);
  assert.equal(loopBusyEnough([quiet, busy], 1000), true, 'one busy thread is enough');
  assert.equal(loopBusyEnough([{ loop: idleBefore }], 1000), false, 'no reading in the load: not busy');
  assert.equal(loopBusyEnough([], 1000), false);
});
