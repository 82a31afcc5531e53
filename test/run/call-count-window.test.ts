import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CALL_COUNT_GAP_MS, CALL_COUNT_MS, CALL_COUNT_TAIL_MS, callCountLoadMs, callCountWindow } from '../../src/run/call-count-window.js';

test('call-count window: after the measured load, and the unmeasured load runs until it is read', () => {
  const w = callCountWindow(1_000_000, 5000);
  assert.deepEqual(w, { from: 1_005_000 + CALL_COUNT_GAP_MS, until: 1_005_000 + CALL_COUNT_GAP_MS + CALL_COUNT_MS });
  // The measured load ended 80 ms late: the extra load still covers the window and its tail.
  assert.equal(callCountLoadMs(w!, 1_005_080), CALL_COUNT_GAP_MS + CALL_COUNT_MS + CALL_COUNT_TAIL_MS - 80);
  assert.ok(callCountLoadMs(w!, w!.until + CALL_COUNT_TAIL_MS + 1) < 0, 'a window already over asks for no load');
  assert.equal(callCountWindow(1_000_000, 0), undefined);
});
