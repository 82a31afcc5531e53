import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gcPressure } from '../../src/analyze/gc-pressure.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { syntheticCpuProfile, syntheticHeapProfile } from '../fixtures/telemetry/synthetic-profile.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';
import type { ProfileRef } from '../../src/run-dir/run-data.js';

const cwd = '/srv/app';

for (const noise of NOISE_LEVELS) {
  test(`gc: scavenge storms name the allocating function and suggest a semi-space size (noise ${noise})`, () => {
    const heap = syntheticHeapProfile(
      [
        { name: 'buildRows', file: 'server.js', line: 9, bytes: 90e6 },
        { name: 'handler', file: 'server.js', line: 20, bytes: 5e6 },
      ],
      { cwd },
    );
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, cwd, minorGcPerS: 120, minorGcMs: 2.5, profiles: [heap] });
      const [f] = gcPressure(run);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.category, 'gc-pressure');
      assert.equal(f.severity, 'critical');
      assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['buildRows', 'server.js', 9]);
      assert.equal(f.evidence.suggestedSemiSpaceMiB, 64);
      assert.ok(f.recommendation.includes("`hotpath run --vary '--max-semi-space-size=16,32,64,128' -- node server.js`"), f.recommendation);
    }
  });

  test(`gc: a callee allocating nearly as much as its caller is named (V8 charges inlined allocations to the caller) (noise ${noise})`, () => {
    const site = (
      name: string,
      line: number,
      bytes: number,
      callees: { name: string; file: string; line: number; bytes: number }[] = [],
    ) => ({ name, file: 'server.js', line, bytes, callees });
    const inlined = syntheticHeapProfile([site('handleReport', 20, 55e6, [site('buildRows', 5, 44e6)])], { cwd });
    const ownWork = syntheticHeapProfile([site('handleReport', 20, 55e6, [site('formatRow', 9, 10e6)])], { cwd });
    for (const seed of SEEDS) {
      const culprit = (heap: typeof inlined) =>
        gcPressure(syntheticRun({ seed, noise, cwd, minorGcPerS: 120, minorGcMs: 2.5, profiles: [heap] }))[0]?.culprit?.function;
      assert.equal(culprit(inlined), 'buildRows', `seed ${seed}`);
      assert.equal(culprit(ownWork), 'handleReport', `seed ${seed}`);
    }
  });

  test(`gc: with a CPU profile, the callee is named only when it also holds the CPU work (noise ${noise})`, () => {
    const heap = syntheticHeapProfile(
      [
        {
          name: 'handleReport',
          file: 'server.js',
          line: 20,
          bytes: 70e6,
          callees: [{ name: 'buildRows', file: 'server.js', line: 5, bytes: 25e6 }],
        },
      ],
      { cwd },
    );
    const cpu = (callerShare: number, calleeShare: number) =>
      syntheticCpuProfile(
        [
          { name: 'handleReport', file: 'server.js', line: 20, share: callerShare },
          { name: 'buildRows', file: 'server.js', line: 5, share: calleeShare },
        ],
        { cwd },
      );
    const workInCallee = cpu(0.1, 0.4);
    const workInCaller = cpu(0.4, 0.1);
    for (const seed of SEEDS) {
      const culprit = (profile: typeof heap) =>
        gcPressure(syntheticRun({ seed, noise, cwd, minorGcPerS: 120, minorGcMs: 2.5, profiles: [heap, profile] }))[0]?.culprit?.function;
      assert.equal(culprit(workInCallee), 'buildRows', `seed ${seed}`);
      assert.equal(culprit(workInCaller), 'handleReport', `seed ${seed}`);
    }
  });

  test(`gc: ordinary GC (1-2 % of the time) stays quiet (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, minorGcPerS: 10, minorGcMs: 1, majorGcPerS: 0.2, majorGcMs: 10 });
      assert.deepEqual(gcPressure(run), []);
    }
  });
}

test("gc: garbage the server stack makes (Node's HTTP, the framework's response path) is a note, with no allocator named", () => {
  // A healthy Express JSON route: most bytes before any app frame (the HTTP parser, the router),
  // the rest in res.json's path under the handler; the handler's own objects are a sliver.
  const express = (bytes: number, own: number) =>
    syntheticHeapProfile(
      [
        { name: 'parserOnHeadersComplete', file: 'node:_http_common', line: 72, bytes: 0.6 * bytes },
        {
          name: 'handle',
          file: 'node_modules/express/lib/router/layer.js',
          line: 86,
          bytes: 0.05 * bytes,
          callees: [
            {
              name: 'getStatus',
              file: 'server.js',
              line: 10,
              bytes: own,
              callees: [{ name: 'json', file: 'node_modules/express/lib/response.js', line: 250, bytes: 0.35 * bytes }],
            },
          ],
        },
      ],
      { cwd },
    );
  const [f] = gcPressure(syntheticRun({ cwd, minorGcPerS: 120, minorGcMs: 2.5, profiles: [express(90e6, 0.5e6)] }));
  assert.equal(f.severity, 'info');
  assert.equal(f.culprit, undefined, "the handler carries only the framework's bytes");
  assert.ok((f.evidence.appAllocationShare as number) < 0.02, String(f.evidence.appAllocationShare));
  assert.match(f.summary, /allocated by the app's own code; the rest by Node and the framework/);
  assert.match(f.recommendation, /Little of this garbage is the app's own/);
  // The same stack with a handler that builds most of the garbage itself: the app's to fix.
  const [g] = gcPressure(syntheticRun({ cwd, minorGcPerS: 120, minorGcMs: 2.5, profiles: [express(20e6, 80e6)] }));
  assert.equal(g.severity, 'critical');
  assert.equal(g.culprit?.function, 'getStatus');
  assert.ok((g.evidence.appAllocationShare as number) > 0.7, String(g.evidence.appAllocationShare));
});

test("gc: a GC share the app's own bytes explain little of is the server stack's, even above a fifth of the bytes", () => {
  // A healthy Express 4 app behind a middleware stack (request id, cookies, CORS headers): Node's
  // setHeader inlined into the middleware puts a quarter of the bytes under app frames, while the
  // GC those bytes explain is a few per cent of the window (probe round s: 13.3 % GC, 26 % own).
  const stack = (own: number) =>
    syntheticHeapProfile(
      [
        { name: 'parserOnHeadersComplete', file: 'node:_http_common', line: 72, bytes: 45e6 },
        {
          name: 'handle',
          file: 'node_modules/express/lib/router/layer.js',
          line: 86,
          bytes: 5e6,
          callees: [
            { name: 'corsHeaders', file: 'lib/middleware.js', line: 14, bytes: own },
            {
              name: 'home',
              file: 'server.js',
              line: 13,
              bytes: 1e6,
              callees: [{ name: 'json', file: 'node_modules/express/lib/response.js', line: 250, bytes: 25e6 }],
            },
          ],
        },
      ],
      { cwd },
    );
  // 27 scavenges a second of 5 ms: 13.5 % of the window.
  const [f] = gcPressure(syntheticRun({ cwd, noise: 0, minorGcPerS: 27, minorGcMs: 5, profiles: [stack(27e6)] }));
  const own = f.evidence.appAllocationShare as number;
  assert.ok(own > 0.2 && own < 0.4, String(own));
  assert.ok((f.evidence.appExplainedGcShare as number) < 0.05, String(f.evidence.appExplainedGcShare));
  assert.equal(f.severity, 'info');
  assert.equal(f.culprit, undefined);
  assert.match(f.summary, /mostly the cost of the server stack/);
  // The same share of GC made by a middleware that allocates most of the bytes: the app's to fix.
  const [g] = gcPressure(syntheticRun({ cwd, noise: 0, minorGcPerS: 27, minorGcMs: 5, profiles: [stack(300e6)] }));
  assert.equal(g.severity, 'warning');
  assert.equal(g.culprit?.function, 'corsHeaders');
});

test('gc: major-GC pressure is reported without the semi-space advice, and asks for --heap', () => {
  const run = syntheticRun({ minorGcPerS: 2, minorGcMs: 1, majorGcPerS: 4, majorGcMs: 35 });
  const [f] = gcPressure(run);
  assert.equal(f.severity, 'warning');
  assert.equal(f.evidence.suggestedSemiSpaceMiB, undefined);
  assert.doesNotMatch(f.recommendation, /semi-space-size/);
  assert.match(f.recommendation, /--heap/);
});

test('gc: 6 % of the time in GC is mentioned as info, not a warning', () => {
  const [f] = gcPressure(syntheticRun({ noise: 0, minorGcPerS: 40, minorGcMs: 1.5 }));
  assert.equal(f.severity, 'info');
});

test('gc: on a target starved of CPU (busy machine), the share is what free cores would show', () => {
  // 60 scavenges a second of 2.5 ms: 15 % of wall time, a warning on a loop that had the CPU.
  const quiet = gcPressure(syntheticRun({ seed: 1, cwd, elu: 0.5, cores: 0.5, minorGcPerS: 60, minorGcMs: 2.5 }))[0];
  assert.equal(quiet?.severity, 'warning');
  assert.equal(quiet?.evidence.gcWallShare, undefined);
  // The same GC on a half-busy loop that got the CPU 40 % of its active time: GC and the loop's
  // work shrink to 40 %, the idle half stays: 15 % x 0.4 / (0.5 + 0.5 x 0.4) ~ 8.6 %, a note.
  const busy = gcPressure(syntheticRun({ seed: 1, cwd, elu: 0.5, cores: 0.2, minorGcPerS: 60, minorGcMs: 2.5 }))[0];
  assert.equal(busy?.severity, 'info');
  const wall = busy.evidence.gcWallShare as number;
  assert.ok(Math.abs((busy.evidence.gcShare as number) - (wall * 0.4) / 0.7) < 0.005, JSON.stringify(busy.evidence));
  assert.match(busy.summary, /The machine was busy \(the target had the CPU 40 % of its loop's active time\)/);
  // A saturated loop keeps its share: it would only do more work in the window.
  const saturated = gcPressure(syntheticRun({ seed: 1, cwd, elu: 1, cores: 0.4, minorGcPerS: 60, minorGcMs: 2.5 }))[0];
  assert.equal(saturated?.severity, 'warning');
  assert.ok(Math.abs((saturated.evidence.gcShare as number) - (saturated.evidence.gcWallShare as number)) < 0.005);
});

test('gc: one long GC is a pause, not pressure: at most a note, and said so', () => {
  // About one major GC of 800 ms in the window, nothing else: a large share drawn from one event.
  const run = syntheticRun({ noise: 0, minorGcPerS: 0, majorGcPerS: 0.1, majorGcMs: 800 });
  const [f] = gcPressure(run);
  assert.ok(f, 'the pause is still mentioned');
  assert.ok((f.evidence.gcCount as number) < 3, JSON.stringify(f.evidence));
  assert.ok((f.evidence.gcShare as number) >= 0.05, JSON.stringify(f.evidence));
  assert.equal(f.severity, 'info');
  assert.match(f.summary, /too few to call pressure/);
});

test('gc: a kind of GC seen fewer than 3 times is a pause beside recurring ones: stated, not a rate of pressure', () => {
  // A healthy app on a busy machine: ~4 scavenges a second of 2 ms and, once in the 10 s window,
  // two major GCs of 600 ms (a small heap the OS kept off the cores): 13 % of the time in GC.
  const run = syntheticRun({ seed: 3, noise: 0, minorGcPerS: 4, minorGcMs: 2, majorGcPerS: 0.2, majorGcMs: 600 });
  const [f] = gcPressure(run);
  assert.ok(f, 'the GC time is still mentioned');
  assert.ok((f.evidence.gcShare as number) >= 0.1, JSON.stringify(f.evidence));
  assert.ok((f.evidence.recurringGcShare as number) < 0.02, JSON.stringify(f.evidence));
  assert.equal(f.severity, 'info');
  assert.match(f.summary, /kinds of GC seen fewer than 3 times: pauses, not a rate of pressure/);
  // The same major GCs recurring (four a second, 35 ms each) are pressure.
  const recurring = gcPressure(syntheticRun({ seed: 3, noise: 0, minorGcPerS: 4, minorGcMs: 2, majorGcPerS: 4, majorGcMs: 35 }))[0];
  assert.equal(recurring?.severity, 'warning');
  assert.equal(recurring.evidence.recurringGcShare, undefined);
});

test('gc: on a starved target, a GC share the CPU profile does not see is not believed', () => {
  // 60 scavenges a second of 3 ms on a saturated loop that got the CPU 40 % of its active time:
  // 18 % of the wall time, kept as is by the scaling (a saturated loop keeps its share).
  const cpu = (gcShare: number) =>
    syntheticCpuProfile(
      [
        { name: 'handler', file: 'server.js', line: 4, share: 0.9 - gcShare },
        { name: '(garbage collector)', file: '', line: 0, share: gcShare },
      ],
      { cwd, idleShare: 0.05 },
    );
  const busy = { seed: 2, noise: 0, cwd, elu: 1, cores: 0.4, minorGcPerS: 60, minorGcMs: 3 };
  // The scavenges waited for helper threads the OS did not run: 3 % of the samples are GC.
  const waited = gcPressure(syntheticRun({ ...busy, profiles: [cpu(0.03)] }))[0];
  assert.ok(waited === undefined || waited.severity === 'info', JSON.stringify(waited?.evidence));
  // An app's own churn shows in the samples as well: 20 % of them.
  const churn = gcPressure(syntheticRun({ ...busy, profiles: [cpu(0.2)] }))[0];
  assert.equal(churn?.severity, 'warning', JSON.stringify(churn?.evidence));
  assert.ok(Math.abs((churn.evidence.gcSampleShare as number) - 0.2) < 0.03, JSON.stringify(churn.evidence));
  // A target that had the CPU: the wall time is taken as measured, whatever the profile says.
  const quiet = gcPressure(syntheticRun({ ...busy, cores: 1, profiles: [cpu(0.03)] }))[0];
  assert.equal(quiet?.severity, 'warning', JSON.stringify(quiet?.evidence));
});

for (const noise of NOISE_LEVELS) {
  test(`gc: where the GCs were observed in slices, the share is the CPU profile's, whatever the slices caught (noise ${noise})`, () => {
    // A server scavenging 100 times a second (0.6 ms each) with a major GC of 80 ms every 2.5 s:
    // 9.2 % of the time in GC. The agent observes the first 300 ms of every second, so the four
    // majors are caught or missed by chance: the slices extrapolate to 6 % (none caught) or 9 %
    // (one) by seed. The profile's samples span the window: 12 % of them GC.
    const cpu = (gcShare: number, durationMs?: number) =>
      syntheticCpuProfile(
        [
          { name: 'buildRows', file: 'server.js', line: 9, share: 0.8 - gcShare },
          { name: '(garbage collector)', file: '', line: 0, share: gcShare },
        ],
        { cwd, idleShare: 0.2, ...(durationMs !== undefined ? { durationMs } : {}) },
      );
    const sliced = {
      noise,
      cwd,
      elu: 0.8,
      minorGcPerS: 100,
      minorGcMs: 0.6,
      majorGcPerS: 0.4,
      majorGcMs: 80,
      gcWindows: { windowMs: 300 },
    };
    for (const seed of SEEDS) {
      const [f] = gcPressure(syntheticRun({ ...sliced, seed, profiles: [cpu(0.12)] }));
      assert.ok(Math.abs((f?.evidence.gcShare as number) - 0.12) < 0.01, `seed ${seed} ${JSON.stringify(f?.evidence)}`);
      assert.equal(f.evidence.gcShareSource, 'cpu-profile');
      assert.equal(f.severity, 'warning');
      assert.equal(typeof f.evidence.gcWallShare, 'number');
      assert.match(f.summary, /by the CPU profile's samples/);
      // A profile shorter than GC_PROFILE_MIN_MS stands for nothing: the slices' estimate is kept.
      const [short] = gcPressure(syntheticRun({ ...sliced, seed, profiles: [cpu(0.12, 500)] }));
      assert.equal(short?.evidence.gcShareSource, undefined, `seed ${seed}`);
    }
    // A target starved of the CPU keeps the lesser of the scaled slices and the samples: both swell there.
    const [starved] = gcPressure(syntheticRun({ ...sliced, seed: 1, minorGcMs: 1.5, cores: 0.4, profiles: [cpu(0.12)] }));
    assert.ok(starved, 'the GC is still mentioned');
    assert.equal(starved.evidence.gcShareSource, undefined, JSON.stringify(starved.evidence));
    assert.equal(typeof starved.evidence.cpuPerActive, 'number');
    assert.ok((starved.evidence.gcShare as number) < (starved.evidence.gcWallShare as number), JSON.stringify(starved.evidence));
    // Observed all the time (GCs rarer than the agent's per-second budget), the GCs are measured,
    // not extrapolated: their share is kept on a target that had the CPU.
    const [whole] = gcPressure(syntheticRun({ ...sliced, seed: 1, gcWindows: undefined, profiles: [cpu(0.03)] }));
    assert.equal(whole?.evidence.gcShareSource, undefined);
    assert.ok((whole?.evidence.gcShare as number) > 0.08, JSON.stringify(whole?.evidence));
  });
}

test("gc: bytes a library the app calls allocated in its own callbacks are the app's, named by its caller (round z)", () => {
  // An Express route logging a large object per request through winston: the logger formats and
  // writes each entry when its file stream drains, from node's fs callback, with no app frame on
  // the stack; express (it calls the app) keeps its bytes as the server stack's, and so does qs
  // when express calls it, though the app calls it too.
  const cwd = '/srv/app';
  const winstonInfo = { name: 'info', file: 'node_modules/winston/lib/winston/create-logger.js', line: 71, bytes: 0.5e6 };
  const heap = (deferred: number, sampledCall = true) =>
    syntheticHeapProfile(
      [
        { name: 'parserOnHeadersComplete', file: 'node:_http_common', line: 72, bytes: 10e6 },
        {
          name: 'handle',
          file: 'node_modules/express/lib/router/layer.js',
          line: 86,
          bytes: 1e6,
          callees: [
            { name: 'parse', file: 'node_modules/qs/lib/parse.js', line: 239, bytes: 40e6 },
            {
              name: 'getCart',
              file: 'server.js',
              line: 5,
              bytes: 0.2e6,
              callees: [
                { name: 'logRequest', file: 'lib/log.js', line: 7, bytes: 0.1e6, callees: sampledCall ? [winstonInfo] : [] },
                { name: 'parse', file: 'node_modules/qs/lib/parse.js', line: 239, bytes: 0.1e6 },
                { name: 'json', file: 'node_modules/express/lib/response.js', line: 250, bytes: 3e6 },
              ],
            },
          ],
        },
        {
          name: 'wrapper',
          file: 'node:fs',
          line: 822,
          bytes: 0,
          callees: [
            {
              name: 'flow',
              file: 'node_modules/readable-stream/lib/_stream_readable.js',
              line: 855,
              bytes: 0.5e6,
              callees: [
                {
                  name: 'log',
                  file: 'node_modules/winston/lib/winston/transports/file.js',
                  line: 150,
                  bytes: 0.2e6,
                  callees: [{ name: 'stringify', file: 'node_modules/safe-stable-stringify/index.js', line: 601, bytes: deferred }],
                },
              ],
            },
          ],
        },
        // Express's own work after the response, with no app frame: the server stack's.
        { name: 'onFinish', file: 'node_modules/express/lib/response.js', line: 900, bytes: 2e6 },
      ],
      { cwd },
    );
  const gc = (profiles: ProfileRef[]) => gcPressure(syntheticRun({ cwd, minorGcPerS: 120, minorGcMs: 2.5, profiles }))[0];
  const f = gc([heap(60e6)]);
  assert.equal(f.severity, 'critical');
  assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['logRequest', 'lib/log.js', 7]);
  assert.match(f.summary, /allocated by winston, which logRequest \(lib\/log\.js:7\) calls, in callbacks of its own/);
  // A logger writing little: the server stack's garbage (qs under express included), a note.
  const g = gc([heap(0.5e6)]);
  assert.equal(g.severity, 'info');
  assert.equal(g.culprit, undefined);
  // The call into the logger allocated too little to be sampled: the CPU profile saw it.
  assert.equal(gc([heap(60e6, false)]).severity, 'info');
  const cpu = syntheticCpuProfile(
    [
      {
        name: 'logRequest',
        file: 'lib/log.js',
        line: 7,
        share: 0.02,
        callee: { name: 'info', file: 'node_modules/winston/lib/winston/create-logger.js', share: 0.05 },
      },
    ],
    { cwd },
  );
  const h = gc([heap(60e6, false), cpu]);
  assert.equal(h.severity, 'critical');
  assert.equal(h.culprit?.function, 'logRequest');
});
