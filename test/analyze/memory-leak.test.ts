import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryLeak } from '../../src/analyze/memory-leak.js';
import { SYNTHETIC_START, syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

for (const noise of NOISE_LEVELS) {
  test(`memory leak: heap after GC rising 40 -> 100 MB is reported with slope and fit (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, heapMB: (p) => 40 + 60 * p, heapSawMB: 10, majorGcPerS: 1 });
      const [f] = memoryLeak(run);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.category, 'memory-leak');
      assert.ok((f.evidence.fitR2 as number) >= 0.8);
      const growth = f.evidence.heapGrowthBytes as number;
      assert.ok(growth > 45e6 && growth < 80e6, `growth ${growth}`);
      assert.ok((f.evidence.bytesPerRequest as number) > 0);
    }
  });

  test(`memory leak: a sawtooth around a flat baseline is not a leak (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, heapMB: 60, heapSawMB: 40, majorGcPerS: 1 });
      assert.deepEqual(memoryLeak(run), []);
    }
  });
}

test('memory leak: one high sample at the end is not a trend', () => {
  const run = syntheticRun({ heapMB: (p) => (p > 0.97 ? 200 : 40), heapSawMB: 2, majorGcPerS: 1 });
  assert.deepEqual(memoryLeak(run), []);
});

test('memory leak: heap growth without full GCs (promotion before the first mark-sweep) is only an unconfirmed note', () => {
  const run = syntheticRun({ heapMB: (p) => 5 + 30 * p, majorGcPerS: 0.1 });
  assert.deepEqual(memoryLeak(run).map((f) => [f.code, f.severity]), [['HOTPATH_HEAP_GROWTH_UNCONFIRMED', 'info']]);
  assert.deepEqual(memoryLeak(syntheticRun({ heapMB: 20, majorGcPerS: 0.1 })), []);
});

test('memory leak: a few full GCs close together still make the trend (each one measures what survived)', () => {
  // A fast leak: V8 runs only three full GCs in a 5 s run, the first two within half a second.
  const run = syntheticRun({ durationS: 5, heapMB: (p) => 15 + 600 * p, majorGcPerS: 0 });
  const [thread] = run.threads;
  const major = (atS: number, mb: number) => ({ kind: 'major' as const, start: SYNTHETIC_START + atS * 1000, durationMs: 10, flags: 0, heapAfter: mb * 1024 * 1024 });
  thread.gc.push(major(0.2, 15), major(0.55, 47), major(2.0, 196));
  thread.gc.sort((a, b) => a.start - b.start);
  const [f] = memoryLeak(run);
  assert.equal(f?.code, 'HOTPATH_MEMORY_LEAK', JSON.stringify(memoryLeak(run)));
  assert.equal(f.severity, 'critical');
});

/** A run whose canary readings (heap after each full GC) are given, MB. */
function canaryRun(readings: [atS: number, mb: number][]) {
  const run = syntheticRun({ durationS: 5, heapMB: 30, majorGcPerS: 0, gcWindows: { windowMs: 1000 } });
  const [thread] = run.threads;
  const mb = (x: number) => x * 1024 * 1024;
  for (const [atS, bytes] of readings) {
    const t = SYNTHETIC_START + atS * 1000;
    const s = thread.samples.find((x) => x.t >= t) ?? thread.samples[thread.samples.length - 1];
    s.gc = { observedMs: s.gc?.observedMs ?? 0, full: (s.gc?.full ?? 0) + 1, heapAfterFull: [...(s.gc?.heapAfterFull ?? []), { t, bytes: mb(bytes) }] };
  }
  return run;
}

test('memory leak: a heap that settles as load begins (a step from the first full GC) is not a leak, however well it fits', () => {
  // Three full GCs, the last two close together: a line through them has R² > 0.99.
  assert.deepEqual(memoryLeak(canaryRun([[0.2, 8.6], [1.2, 22.5], [1.35, 22.7]])), []);
  // The same readings still rising after the first one are a leak.
  assert.equal(memoryLeak(canaryRun([[0.2, 8.6], [1.2, 22.5], [2.4, 40]]))[0]?.code, 'HOTPATH_MEMORY_LEAK');
});

test('memory leak: the baseline is never below the smallest heap a full GC left (the line\'s start can be)', () => {
  // Faster than linear from 5 MB: the fitted line starts near 2 MB, a heap this run never had.
  const [f] = memoryLeak(syntheticRun({ heapMB: (p) => 5 + 95 * p ** 1.1, heapSawMB: 5, majorGcPerS: 1 }));
  assert.ok(f);
  const baseline = f.evidence.heapBaselineBytes as number;
  assert.ok(baseline >= 4.5e6 && baseline < 8e6, `baseline ${baseline}`);
  assert.match(f.summary, /\(from [5-7](\.\d)? MB/);
});

test('memory leak: Buffers kept across requests (external memory rising through full GCs) are reported, the JS heap flat', () => {
  const run = syntheticRun({ heapMB: 12, heapSawMB: 4, externalMB: (p) => 1 + 130 * p, externalSawMB: 3, majorGcPerS: 0.2 });
  const [f, ...rest] = memoryLeak(run);
  assert.deepEqual(rest, []);
  assert.equal(f?.code, 'HOTPATH_EXTERNAL_MEMORY_LEAK');
  assert.equal(f.severity, 'critical');
  assert.ok(Number(f.evidence.externalGrowthBytes) > 100 * 1024 * 1024);
  assert.match(f.recommendation, /Buffers/);
  // A sawtooth of socket and zlib buffers around a flat level is not a leak; nor is growth before any full GC.
  assert.deepEqual(memoryLeak(syntheticRun({ heapMB: 12, externalMB: 20, externalSawMB: 60, majorGcPerS: 0.2 })), []);
  assert.deepEqual(memoryLeak(syntheticRun({ heapMB: 12, externalMB: (p) => 1 + 130 * p, majorGcPerS: 0 })), []);
});

test('memory leak: a heap that rose with the requests in flight and fell once they drained (after the window) is not a leak', () => {
  const afterLoad = (heapMB: number) => {
    const run = syntheticRun({ heapMB: (p) => 40 + 60 * p, heapSawMB: 10, majorGcPerS: 1 });
    const thread = run.threads[0];
    const last = thread.samples[thread.samples.length - 1];
    thread.samples.push({ ...last, t: run.load!.end + 400, mem: { ...last.mem, heapUsed: heapMB * 1024 * 1024 } });
    return run;
  };
  assert.deepEqual(memoryLeak(afterLoad(45)), [], 'released: 45 MB against a 40 MB baseline');
  assert.equal(memoryLeak(afterLoad(98))[0]?.code, 'HOTPATH_MEMORY_LEAK', 'still held after the load');
});

/** Probe p6-http-tiny-writes: 20 requests in flight, each ~8 MB of queued writes; the heap after full GCs rose 150 MB. */
function withPostLoadGc(heapAfterMB: number | undefined, heapUsedAfterMB?: number) {
  const run = syntheticRun({ heapMB: (p) => 40 + 150 * p, heapSawMB: 10, majorGcPerS: 1 });
  const thread = run.threads[0];
  const last = thread.samples[thread.samples.length - 1];
  // The cool-down saw no GC: the samples after the window still read the heap of the load.
  thread.samples.push({ ...last, t: run.load!.end + 200, mem: { ...last.mem, heapUsed: (heapUsedAfterMB ?? 200) * 1024 * 1024 } });
  if (heapAfterMB !== undefined) {
    thread.samples.push({ ...last, t: run.load!.end + 900, mem: { ...last.mem, heapUsed: (heapAfterMB + 2) * 1024 * 1024 }, postLoadGc: { gcMs: 35, heapAfter: heapAfterMB * 1024 * 1024 } });
  }
  return run;
}

test('memory leak: requests in flight held the growth: the full GC the agent forced after the load found the heap back at its baseline', () => {
  assert.equal(memoryLeak(withPostLoadGc(undefined))[0]?.code, 'HOTPATH_MEMORY_LEAK', 'without that reading the growth stands (the probe\'s false critical)');
  assert.deepEqual(memoryLeak(withPostLoadGc(44)), [], 'released: 44 MB after the GC against a 40 MB baseline');
});

test('memory leak: a real leak keeps its bytes through the post-load GC, and the finding says so', () => {
  const [f] = memoryLeak(withPostLoadGc(185));
  assert.equal(f?.code, 'HOTPATH_MEMORY_LEAK');
  assert.equal(f.evidence.heapAfterLoadGcBytes, 185 * 1024 * 1024);
  assert.match(f.summary, /Once the load was over, a full GC left 185 MB: the app still holds it\./);
});

test('memory leak: the post-load GC reading outweighs a lower heap reading after the window', () => {
  // A sample in the cool-down read low (young garbage freed, say) but the forced GC found the growth held.
  const [f] = memoryLeak(withPostLoadGc(185, 60));
  assert.equal(f?.code, 'HOTPATH_MEMORY_LEAK');
});

test('memory leak: too few full GCs: a post-load GC back at the start drops the note; one still high is said', () => {
  const run = (afterMB: number) => {
    const r = syntheticRun({ heapMB: (p) => 5 + 30 * p, majorGcPerS: 0.1 });
    const thread = r.threads[0];
    const last = thread.samples[thread.samples.length - 1];
    thread.samples.push({ ...last, t: r.load!.end + 500, postLoadGc: { gcMs: 10, heapAfter: afterMB * 1024 * 1024 } });
    return r;
  };
  assert.deepEqual(memoryLeak(run(6)), []);
  const [f] = memoryLeak(run(33));
  assert.equal(f?.code, 'HOTPATH_HEAP_GROWTH_UNCONFIRMED');
  assert.equal(f.evidence.heapAfterLoadGcBytes, 33 * 1024 * 1024);
  assert.match(f.summary, /a full GC once the load was over left 33 MB/);
});
