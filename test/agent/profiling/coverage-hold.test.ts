import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Session } from 'node:inspector';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CallCounter } from '../../../src/agent/profiling/call-counts.js';
import { coverageHeld, endProfilerSession } from '../../../src/agent/profiling/coverage-hold.js';

// Called in the windows below: `outer` calls `inner` five times per call.
function inner(x: number): number {
  return x + 1;
}
function outer(n: number): number {
  let s = 0;
  for (let i = 0; i < 5; i++) s += inner(n + i);
  return s;
}

const connect = (): Session => {
  const s = new Session();
  s.connect();
  return s;
};

/**
 * Opens a window, and half-way through it a second session (a stall's profile, the CPU
 * profile's) that enabled the Profiler domain ends through `end`; returns the counts of
 * `outer` and `inner` and whether the second session was still connected when the window was read.
 */
async function windowWithAnotherSession(end: (other: Session) => void) {
  for (let i = 0; i < 20_000; i++) outer(i);
  const errors: string[] = [];
  let opened = false;
  const counter = new CallCounter(
    connect,
    (what, err) => errors.push(`${what}: ${String(err)}`),
    undefined,
    undefined,
    () => (opened = true),
  );
  const now = Date.now();
  counter.schedule(now + 10, now + 60_000);
  const other = connect();
  let otherGone = false;
  const disconnect = other.disconnect.bind(other);
  other.disconnect = () => {
    otherGone = true;
    disconnect();
  };
  other.post('Profiler.enable');
  let sum = 0;
  const spin = async (turns: number) => {
    for (let turn = 0; turn < turns; turn++) {
      for (let i = 0; i < 100; i++) sum += outer(i);
      await new Promise((r) => setTimeout(r, 1));
    }
  };
  for (let turn = 0; turn < 1000 && !opened; turn++) await spin(1);
  assert.ok(opened, 'the window opened');
  await spin(20);
  end(other);
  await spin(20);
  const goneBeforeRead = otherGone;
  counter.readNow();
  for (let turn = 0; turn < 1000 && counter.window === undefined; turn++) await spin(1);
  const window = counter.window;
  assert.ok(sum > 0);
  assert.deepEqual(errors, []);
  assert.ok(window !== undefined, 'the window was read');
  counter.cancel();
  const mine = [...window.scripts.values()].find((s) => s.url === pathToFileURL(fileURLToPath(import.meta.url)).href);
  const count = (name: string) => mine?.functions.find((f) => f.functionName === name)?.ranges[0].count ?? 0;
  return { outer: count('outer'), inner: count('inner'), goneBeforeRead, goneAfter: otherGone };
}

test('coverage hold: a Profiler session ending inside the window ends after it is read, and every call is still counted', async () => {
  const r = await windowWithAnotherSession((other) => endProfilerSession(other));
  assert.equal(r.goneBeforeRead, false, 'still connected while the window was open');
  assert.equal(r.goneAfter, true, 'disconnected once the window was read');
  assert.equal(coverageHeld(), false);
  assert.ok(r.outer > 100, `outer counted ${r.outer} times`);
  assert.equal(r.inner, 5 * r.outer);
});

test("coverage hold: why (V8's behaviour): a Profiler session disconnecting inside the window switches the counting off, and every function reads 1", async () => {
  const r = await windowWithAnotherSession((other) => other.disconnect());
  assert.equal(r.goneBeforeRead, true);
  assert.deepEqual([r.outer, r.inner], [1, 1]);
});

test('coverage hold: without a window, a Profiler session ends at once', () => {
  const s = connect();
  s.post('Profiler.enable');
  let gone = false;
  const disconnect = s.disconnect.bind(s);
  s.disconnect = () => {
    gone = true;
    disconnect();
  };
  endProfilerSession(s);
  assert.equal(gone, true);
});
