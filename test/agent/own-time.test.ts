// The agent's own time on its thread: timer callbacks are timed in CPU time, a few calls a
// second per timer (each CPU clock read is a syscall), a timed call counting for those it stands for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ownTime, timed, timedEvery, TIMED_CALLS_PER_SECOND } from '../../src/agent/own-time.js';

/**
 * Burns CPU until the clock own-time reads has moved by `ms` (bounded by a wall-clock limit): this
 * thread's where node has it (on 24 the process's clock also counts V8's compiler and GC threads,
 * so a burn measured on it ended with half the thread's time), else the process's.
 */
const threadCpuUsage = (process as unknown as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
function burn(ms: number): void {
  const cpu = () => {
    const c = typeof threadCpuUsage === 'function' ? threadCpuUsage.call(process) : process.cpuUsage();
    return (c.user + c.system) / 1000;
  };
  const from = cpu();
  let x = 0;
  for (const end = Date.now() + 20_000; Date.now() < end && cpu() - from < ms;) for (let i = 0; i < 1e4; i++) x = (x * 31 + i) % 1000003;
}

test('a timer is timed about TIMED_CALLS_PER_SECOND times a second: one call in timedEvery(period)', () => {
  assert.equal(TIMED_CALLS_PER_SECOND, 5);
  assert.equal(timedEvery(20), 10, 'the loop-delay timer, 50 a second');
  assert.equal(timedEvery(100), 2, 'the sample tick');
  assert.equal(timedEvery(500), 1);
  assert.equal(timedEvery(1000), 1, 'growth reports');
});

test('only one call in `every` is timed, and it counts `every` times; the others add nothing', () => {
  let calls = 0;
  const fn = timed(() => {
    calls++;
    burn(2);
  }, 4);
  const before = ownTime.ms;
  for (let i = 0; i < 3; i++) fn();
  assert.equal(ownTime.ms, before, 'untimed calls add nothing');
  fn();
  assert.equal(calls, 4);
  assert.ok(ownTime.ms - before >= 4 * 2 * 0.9, `the timed call counts 4 times: ${ownTime.ms - before} ms`);
});

test('a timed callback that throws is still counted, and the error reaches the caller', () => {
  const before = ownTime.ms;
  const fn = timed(() => {
    burn(1);
    throw new Error('boom');
  });
  assert.throws(fn, /boom/);
  assert.ok(ownTime.ms > before);
});
