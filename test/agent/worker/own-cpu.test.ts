// The agent worker's readings of the agent's threads (own-cpu.ts): V8's profiler thread is found
// by name when a profile starts after the thread list was scanned (names are read at two scans
// only, and a profiler thread is a new thread), and its CPU is read from then on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Session } from 'node:inspector';
import { setTimeout as sleep } from 'node:timers/promises';
import { COST_PROFILER, newCostBuffer, OwnCpu } from '../../../src/agent/worker/own-cpu.js';

const post = (s: Session, method: string, params?: object): Promise<unknown> =>
  new Promise((resolve, reject) => s.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test(
  'a profiler thread started after three scans is found at the next one and its CPU read',
  { skip: process.platform !== 'linux' },
  async () => {
    const buf = newCostBuffer();
    const slots = new Float64Array(buf);
    const own = new OwnCpu(buf, true);
    // Three scans a second apart, no profile running: every thread named at least twice.
    for (let i = 0; i < 3; i++) {
      own.refresh();
      if (i < 2) await sleep(1050);
    }
    assert.equal(slots[COST_PROFILER], 0, 'no profiler thread yet');
    const session = new Session();
    session.connect();
    try {
      await post(session, 'Profiler.enable');
      await post(session, 'Profiler.setSamplingInterval', { interval: 100 });
      await post(session, 'Profiler.start');
      await sleep(1050);
      // The profiler thread wakes every 100 µs while the loop runs.
      spin(300);
      own.refresh();
      assert.ok(slots[COST_PROFILER] > 0, `profiler thread CPU ${slots[COST_PROFILER]} ms`);
      await post(session, 'Profiler.stop');
    } finally {
      session.disconnect();
    }
  },
);
