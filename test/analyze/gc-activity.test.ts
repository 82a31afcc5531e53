// GC activity estimated from GCs observed in windows (the agent observes GCs for a slice of every
// second): totals scaled to the time observed, full GCs counted all the same, and runs from an
// agent that observed all the time read as they always did.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gcActivity, loadGcActivity } from '../../src/analyze/signals/gc-activity.js';
import { gcPressure } from '../../src/analyze/gc-pressure.js';
import { memoryLeak } from '../../src/analyze/memory-leak.js';
import { loadWindow, targetThreads } from '../../src/analyze/signals/load-window.js';
import { syntheticRun, type SyntheticOptions } from '../fixtures/telemetry/synthetic-run.js';
import { syntheticHeapProfile } from '../fixtures/telemetry/synthetic-profile.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

const activity = (o: SyntheticOptions) => {
  const run = syntheticRun(o);
  return gcActivity(targetThreads(run), loadWindow(run));
};

test('a run observed all the time (no sample.gc): every GC counts as it is', () => {
  const gc = activity({ seed: 3, minorGcPerS: 50, minorGcMs: 1, majorGcPerS: 0.5, majorGcMs: 8 });
  assert.equal(gc.coverage, 1);
  assert.equal(
    gc.estimatedMs,
    gc.events.reduce((a, e) => a + e.durationMs, 0),
  );
  assert.equal(gc.fullGcs, gc.events.filter((e) => e.kind === 'major').length);
  assert.equal(gc.heapAfterFull.length, gc.fullGcs);
});

test("the load window's GC activity is computed once per run, and is what the window's threads read", () => {
  const run = syntheticRun({ seed: 5, minorGcPerS: 80, minorGcMs: 1.5, majorGcPerS: 0.5, majorGcMs: 9, gcWindows: { windowMs: 100 } });
  const first = loadGcActivity(run);
  assert.equal(loadGcActivity(run), first);
  assert.deepEqual(first, gcActivity(targetThreads(run), loadWindow(run)));
  assert.notEqual(loadGcActivity(syntheticRun({ seed: 5, minorGcPerS: 80, minorGcMs: 1.5 })), first);
});

for (const noise of NOISE_LEVELS) {
  test(`GCs observed 10 % of the time estimate the GC time of the whole run, full GCs all counted (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const o: SyntheticOptions = { seed, noise, minorGcPerS: 120, minorGcMs: 2, majorGcPerS: 0.5, majorGcMs: 10 };
      const all = activity(o);
      const windowed = activity({ ...o, gcWindows: { windowMs: 100 } });
      assert.ok(Math.abs(windowed.coverage - 0.1) < 0.01, `coverage ${windowed.coverage}`);
      assert.ok(windowed.events.length < all.events.length / 5, `${windowed.events.length} of ${all.events.length} seen`);
      const ratio = windowed.estimatedMs / all.estimatedMs;
      assert.ok(ratio > 0.8 && ratio < 1.25, `seed ${seed}: estimated ${windowed.estimatedMs} vs ${all.estimatedMs} ms`);
      assert.equal(windowed.fullGcs, all.fullGcs);
      assert.deepEqual(
        windowed.heapAfterFull.map((p) => p.t),
        all.heapAfterFull.map((p) => p.t),
      );
      const minor = windowed.estimated.minor.count / all.estimated.minor.count;
      assert.ok(minor > 0.8 && minor < 1.25, `minor count ${windowed.estimated.minor.count} vs ${all.estimated.minor.count}`);
    }
  });

  test(`gc-pressure and memory-leak decide the same on windowed GCs as on all of them (noise ${noise})`, () => {
    const heap = syntheticHeapProfile([{ name: 'buildRows', file: 'server.js', line: 9, bytes: 90e6 }], { cwd: '/srv/app' });
    for (const seed of SEEDS) {
      const storm: SyntheticOptions = {
        seed,
        noise,
        cwd: '/srv/app',
        minorGcPerS: 120,
        minorGcMs: 2.5,
        profiles: [heap],
        gcWindows: { windowMs: 100 },
      };
      const [f] = gcPressure(syntheticRun(storm));
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.severity, 'critical');
      assert.equal(f.culprit?.function, 'buildRows');
      assert.equal(f.evidence.suggestedSemiSpaceMiB, 64);
      assert.ok((f.evidence.observedShareOfTime as number) < 0.2);
      assert.match(f.summary, /estimated from the \d+ GCs seen/);
      assert.deepEqual(
        gcPressure(
          syntheticRun({ seed, noise, minorGcPerS: 10, minorGcMs: 1, majorGcPerS: 0.2, majorGcMs: 10, gcWindows: { windowMs: 100 } }),
        ),
        [],
      );

      // Full GCs are counted in every second, observed or not: the leak trend is the same.
      const leak = memoryLeak(
        syntheticRun({ seed, noise, heapMB: (p) => 40 + 60 * p, heapSawMB: 10, majorGcPerS: 1, gcWindows: { windowMs: 100 } }),
      );
      assert.equal(leak[0]?.code, 'HOTPATH_MEMORY_LEAK', `seed ${seed}`);
      assert.deepEqual(
        memoryLeak(syntheticRun({ seed, noise, heapMB: 60, heapSawMB: 40, majorGcPerS: 1, gcWindows: { windowMs: 100 } })),
        [],
      );
    }
  });
}
