import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CALL_COUNT_ENOUGH_REQUESTS,
  CALL_COUNT_GAP_MS,
  CALL_COUNT_MAX_MS,
  CALL_COUNT_MS,
  CALL_COUNT_TAIL_MS,
  callCountLoadMs,
  callCountReadable,
  callCountWindow,
  loopBusyEnough,
  requestsInWindows,
  requestsSince,
} from '../../src/run/call-count-window.js';

test('call-count window: after the measured load, and the unmeasured load runs until it is read at the latest', () => {
  const w = callCountWindow(1_000_000, 5000);
  const from = 1_005_000 + CALL_COUNT_GAP_MS;
  assert.deepEqual(w, { from, readFrom: from + CALL_COUNT_MS, until: from + CALL_COUNT_MAX_MS });
  // The measured load ended 80 ms late: the extra load still covers the window and its tail.
  assert.equal(callCountLoadMs(w!, 1_005_080), CALL_COUNT_GAP_MS + CALL_COUNT_MAX_MS + CALL_COUNT_TAIL_MS - 80);
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

test('call-count window: read after its least length once the threads finished enough requests in their open windows, else later', () => {
  const w = callCountWindow(0, 5000)!;
  // A main thread's readings every 100 ms (sender's clock), `perSample` requests finished in each;
  // its agent worker, on a connection of its own, says when the window opened.
  const main = (pid: number, perSample: number, until: number) => {
    const loop = [];
    for (let t = w.from - 300; t <= until; t += 100) loop.push({ t, elu: 0.9, intervalMs: 100, finished: perSample });
    return { pid, threadId: 0, loop };
  };
  const opened = (pid: number, at: number) => ({ pid, threadId: 0, loop: [], callWindowStart: at });
  // A quiet machine at 200 req/s: plenty by the least length, read then and not before.
  const quiet = [main(1, 20, w.readFrom), opened(1, w.from + 5)];
  assert.equal(callCountReadable(quiet, w, w.readFrom - 1), false, 'not before its least length');
  assert.equal(callCountReadable(quiet, w, w.readFrom), true);
  assert.equal(callCountReadable([main(1, 20, w.readFrom)], w, w.readFrom), false, 'no window opened: nothing to read');
  // The reading that straddles the opening counts in proportion; those before it not at all.
  assert.equal(requestsSince([{ t: w.from + 40, intervalMs: 100, finished: 10 }], w.from), 4);
  // A window that opened late (V8 took 300 ms to reset its counters on a starved thread) counts from then.
  assert.equal(requestsInWindows([main(1, 2, w.readFrom), opened(1, w.from + 300)], w), 4);
  // A starved target: 1 request a sample, 5 by the least length: read once 10 were seen, not sooner.
  const starved = (until: number) => [main(1, 1, until), opened(1, w.from)];
  assert.equal(callCountReadable(starved(w.readFrom), w, w.readFrom), false);
  assert.equal(requestsInWindows(starved(w.from + 900), w), 9);
  assert.equal(callCountReadable(starved(w.from + 900), w, w.from + 900), false);
  assert.equal(requestsInWindows(starved(w.from + 1000), w), CALL_COUNT_ENOUGH_REQUESTS);
  assert.equal(callCountReadable(starved(w.from + 1000), w, w.from + 1000), true);
  // Processes add up (cluster workers); readings without the driven server's requests count none.
  const cluster = [main(1, 3, w.readFrom), opened(1, w.from), main(2, 3, w.readFrom), opened(2, w.from)];
  assert.equal(callCountReadable(cluster, w, w.readFrom), true);
  assert.equal(callCountReadable([{ pid: 1, threadId: 0, loop: [{ t: w.readFrom }] }, opened(1, w.from)], w, w.readFrom), false);
});
