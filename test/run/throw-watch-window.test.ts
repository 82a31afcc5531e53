import { test } from 'node:test';
import assert from 'node:assert/strict';
import { throwWatchReady } from '../../src/run/throw-watch-window.js';

test('throw watch window: ready once every thread that samples its loop said so, on its worker connection', () => {
  const main = { pid: 7, threadId: 0, loop: [{}] };
  const worker = (start?: number) => ({ pid: 7, threadId: 0, loop: [], ...(start !== undefined ? { throwWatchStart: start } : {}) });
  assert.equal(throwWatchReady([main, worker()]), false);
  assert.equal(throwWatchReady([main, worker(1)]), true);
  // A second driven thread (a cluster worker) not yet following.
  assert.equal(throwWatchReady([main, worker(1), { pid: 8, threadId: 0, loop: [{}] }]), false);
  // No driven thread at all: nothing to wait for is not "ready" (the wait then ends at its bound).
  assert.equal(throwWatchReady([worker(1)]), false);
});
