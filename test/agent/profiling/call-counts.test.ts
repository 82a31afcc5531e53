import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Session } from 'node:inspector';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CallCounter, isCountedScript, keptCalls } from '../../../src/agent/profiling/call-counts.js';

test("call counts: only the app's own scripts with calls are kept", () => {
  // The shape of Profiler.takePreciseCoverage's result ({callCount: true, detailed: false}).
  const fn = (functionName: string, count: number) => ({
    functionName,
    isBlockCoverage: false,
    ranges: [{ startOffset: 0, endOffset: 90, count }],
  });
  const result = [
    { scriptId: '10', url: 'node:internal/streams/readable', functions: [fn('read', 50)] },
    { scriptId: '11', url: 'file:///srv/app/node_modules/koa/lib/application.js', functions: [fn('handleRequest', 50)] },
    { scriptId: '12', url: 'file:///srv/app/lib/rules.js', functions: [fn('evaluateRule', 400), fn('unused', 0)] },
    { scriptId: '13', url: '', functions: [fn('anonymous', 400)] },
    { scriptId: '14', url: 'file:///opt/hotpath/dist/agent/preload.cjs', functions: [fn('sample', 9)] },
    { scriptId: '15', url: 'file:///srv/app/lib/idle.js', functions: [fn('never', 0)] },
  ];
  const kept = keptCalls(result, 'file:///opt/hotpath/dist/agent/');
  assert.deepEqual([...kept.keys()], ['12']);
  assert.deepEqual(
    kept.get('12')?.functions.map((f) => f.functionName),
    ['evaluateRule'],
  );
  assert.equal(isCountedScript('/srv/app/server.js'), true);
  assert.equal(isCountedScript('evalmachine.<anonymous>'), false);
});

// Called from the test below: `outer` calls `inner` seven times per call.
function inner(x: number): number {
  return x * 2;
}
function outer(n: number): number {
  let s = 0;
  for (let i = 0; i < 7; i++) s += inner(n + i);
  return s;
}

test('call counts: a window read through a real inspector session counts every call made in it', async () => {
  const connect = (): Session => {
    const s = new Session();
    s.connect();
    return s;
  };
  const errors: string[] = [];
  const counter = new CallCounter(connect, (what, err) => errors.push(`${what}: ${String(err)}`));
  // Warm up: optimized and inlined before the window, as in a loaded server.
  for (let i = 0; i < 20_000; i++) outer(i);
  const now = Date.now();
  counter.schedule(now + 20, now + 220);
  let sum = 0;
  for (let turn = 0; turn < 500 && counter.window === undefined; turn++) {
    for (let i = 0; i < 200; i++) sum += outer(i);
    await new Promise((r) => setTimeout(r, 2));
  }
  assert.ok(sum > 0);
  assert.deepEqual(errors, []);
  const w = counter.window;
  assert.ok(w !== undefined, 'the window was read');
  assert.ok(w.end > w.start);
  const mine = [...w.scripts.values()].find((s) => s.url === pathToFileURL(fileURLToPath(import.meta.url)).href);
  assert.ok(mine, `this file among ${[...w.scripts.values()].map((s) => s.url).join(', ')}`);
  const count = (name: string) => mine.functions.find((f) => f.functionName === name)?.ranges[0].count ?? 0;
  assert.ok(count('outer') > 0);
  // Counted, not sampled: exactly seven inner calls per outer call, inlining or not.
  assert.equal(count('inner'), 7 * count('outer'));
  counter.cancel();
});

test('call counts: told to read, the window is read at once instead of at its latest end; told before it opened, the schedule stands', async () => {
  const connect = (): Session => {
    const s = new Session();
    s.connect();
    return s;
  };
  const errors: string[] = [];
  const counter = new CallCounter(connect, (what, err) => errors.push(`${what}: ${String(err)}`));
  const now = Date.now();
  counter.schedule(now + 100, now + 60_000);
  // Before the window opened: nothing to read, and the window still opens.
  counter.readNow();
  let sum = 0;
  const spin = async (ms: number) => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      for (let i = 0; i < 200; i++) sum += outer(i);
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  await spin(400);
  const early = counter.window;
  assert.equal(early, undefined, 'not read before it was told');
  const told = Date.now();
  counter.readNow();
  counter.readNow();
  for (let turn = 0; turn < 500 && counter.window === undefined; turn++) await spin(5);
  assert.ok(sum > 0);
  assert.deepEqual(errors, []);
  const w = counter.window;
  assert.ok(w !== undefined, 'the window was read once told');
  assert.ok(w.start >= now + 100 && w.end >= told && w.end < told + 5000, `window ${w.start - now}..${w.end - now} ms`);
  // (What it counted is the test above's: V8 may inline `outer` again while this one spins.)
  counter.cancel();
});
