// The one reading of a sample's own-thread CPU that loop-stats and compare's loop share use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeThreadCpuUs, threadCpuUs } from '../../../src/analyze/signals/thread-cpu.js';

test("a sample's thread CPU: node's figure (user + system) first, else the worker's /proc reading, else none", () => {
  assert.equal(threadCpuUs({ user: 900, system: 100, threadUser: 600, threadSystem: 50, threadOnCpu: 1 }), 650);
  assert.equal(threadCpuUs({ user: 900, system: 100, threadUser: 600 }), 600);
  assert.equal(threadCpuUs({ user: 900, system: 100, threadOnCpu: 700 }), 700);
  assert.equal(threadCpuUs({ user: 900, system: 100 }), undefined);
  assert.equal(nodeThreadCpuUs({ user: 900, system: 100, threadOnCpu: 700 }), undefined, "/proc's reading is not node's");
});
