import { test } from 'node:test';
import assert from 'node:assert/strict';
import { offLoopCpu } from '../../src/analyze/off-loop-cpu.js';
import { ioWait } from '../../src/analyze/io-wait.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { syntheticCpuProfile } from '../fixtures/telemetry/synthetic-profile.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

const cwd = '/srv/app';
/** The main thread: mostly idle, submitting pbkdf2 jobs from hashPassword. */
const pool = () =>
  syntheticCpuProfile(
    [
      {
        name: 'hashPassword',
        file: 'lib/auth.js',
        line: 7,
        share: 0.01,
        callee: { name: 'pbkdf2', file: 'node:internal/crypto/pbkdf2', share: 0.01 },
      },
    ],
    { cwd, idleShare: 0.96 },
  );

for (const noise of NOISE_LEVELS) {
  test(`off-loop CPU: a saturated thread pool behind an idle loop is named with the submitting function (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, cwd, rps: 60, elu: 0.04, cores: 1.6, latencyMs: 300, profiles: [pool()] });
      const [f] = offLoopCpu(run);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.category, 'off-loop-cpu');
      assert.equal(f.evidence.api, 'crypto.pbkdf2');
      assert.deepEqual([f.culprit?.function, f.culprit?.file], ['hashPassword', 'lib/auth.js']);
      assert.ok((f.evidence.offLoopCores as number) > 1.3, String(f.evidence.offLoopCores));
      assert.match(f.recommendation, /UV_THREADPOOL_SIZE/);
      assert.deepEqual(ioWait(run), [], 'not "waiting on I/O"');
    }
  });
}

test("off-loop CPU: quiet when the process CPU is the loop's own; without the hand-over in the profile, no API or culprit is claimed", () => {
  // A slow upstream: idle loop, idle process.
  assert.deepEqual(offLoopCpu(syntheticRun({ cwd, rps: 60, elu: 0.04, cores: 0.05, latencyMs: 300, profiles: [pool()] })), []);
  // Busy cores but no thread-pool or Worker call sampled: the finding, without naming an API.
  const plain = syntheticCpuProfile([{ name: 'handler', file: 'server.js', line: 3, share: 0.03 }], { cwd, idleShare: 0.96 });
  const [f] = offLoopCpu(syntheticRun({ cwd, rps: 60, elu: 0.04, cores: 1.6, latencyMs: 300, profiles: [plain] }));
  assert.ok(f);
  assert.deepEqual([f.culprit, f.evidence.api, f.evidence.kind], [undefined, undefined, undefined]);
  assert.match(f.summary, /did not catch the call/);
  assert.match(f.recommendation, /UV_THREADPOOL_SIZE[\s\S]*pool sized to the cores/);
  // Fast requests: the pool keeps up.
  assert.deepEqual(offLoopCpu(syntheticRun({ cwd, rps: 60, elu: 0.04, cores: 1.6, latencyMs: 5, profiles: [pool()] })), []);
});

test('off-loop CPU: a Worker created per request is named as such', () => {
  const workers = syntheticCpuProfile(
    [
      {
        name: 'computeInWorker',
        file: 'lib/render.js',
        line: 9,
        share: 0.05,
        callee: { name: 'Worker', file: 'node:internal/worker', share: 0.1 },
      },
    ],
    { cwd, idleShare: 0.6 },
  );
  const [f] = offLoopCpu(syntheticRun({ cwd, rps: 50, elu: 0.4, cores: 1.9, latencyMs: 350, profiles: [workers] }));
  assert.ok(f);
  assert.equal(f.evidence.api, 'new Worker()');
  assert.equal(f.culprit?.function, 'computeInWorker');
  assert.match(f.recommendation, /pool/);
});

test("off-loop CPU: with the loop thread's CPU measured, a starved target's share of its own CPU decides, not the cores it got", () => {
  // Beside a CPU hog: the process got 0.29 cores, its loop thread 0.02 of them, 12 logins a second at 1.5 s.
  const starved = syntheticRun({ cwd, rps: 12, elu: 0.12, cores: 0.29, threadCores: 0.022, latencyMs: 1470, profiles: [pool()] });
  const [f] = offLoopCpu(starved);
  assert.equal(f?.category, 'off-loop-cpu');
  assert.ok((f.evidence.offLoopCores as number) < 0.4, String(f.evidence.offLoopCores));
  assert.deepEqual(ioWait(starved), [], 'not "waiting on I/O"');
  // The same cores without the thread's measure (Node 20): the profile caught the app handing the work
  // to the pool, which is enough; without that hand-over, under the floor in cores, as before.
  const unmeasured = { cwd, rps: 12, elu: 0.12, cores: 0.29, latencyMs: 1470 };
  assert.equal(offLoopCpu(syntheticRun({ ...unmeasured, profiles: [pool()] }))[0]?.culprit?.function, 'hashPassword');
  const plain = syntheticCpuProfile([{ name: 'handler', file: 'server.js', line: 3, share: 0.03 }], { cwd, idleShare: 0.96 });
  assert.deepEqual(offLoopCpu(syntheticRun({ ...unmeasured, profiles: [plain] })), []);
  // A slow upstream beside the hog: most of the little CPU the process used was its loop's own (0.1 of 0.13 cores).
  assert.deepEqual(
    offLoopCpu(syntheticRun({ cwd, rps: 80, elu: 0.12, cores: 0.13, threadCores: 0.1, latencyMs: 200, profiles: [pool()] })),
    [],
  );
});

test("off-loop CPU: on a node without the thread's CPU (Node 20), the agent worker's /proc reading of the main thread decides as node's own figure does", () => {
  // The starved login again, its loop thread's CPU read from /proc in lumps (every other sample):
  // no hand-over caught in the profile, far under the 0.4-core floor, yet 92 % of the process's own CPU off the loop.
  const plain = syntheticCpuProfile([{ name: 'handler', file: 'server.js', line: 3, share: 0.03 }], { cwd, idleShare: 0.96 });
  const starved = { cwd, rps: 12, elu: 0.12, cores: 0.29, latencyMs: 1470, profiles: [plain] };
  assert.deepEqual(offLoopCpu(syntheticRun(starved)), [], 'unmeasured: under the floor, nothing caught');
  const [f] = offLoopCpu(syntheticRun({ ...starved, threadOnCpuCores: 0.022 }));
  assert.equal(f?.category, 'off-loop-cpu');
  const measuredByNode = offLoopCpu(syntheticRun({ ...starved, threadCores: 0.022 }))[0];
  assert.ok(Math.abs((f.evidence.offLoopCores as number) - (measuredByNode?.evidence.offLoopCores as number)) < 0.01, 'the same figure');
  assert.deepEqual(ioWait(syntheticRun({ ...starved, threadOnCpuCores: 0.022 })), [], 'not "waiting on I/O"');
  // Beside the hog, a slow upstream whose little CPU was mostly its loop's own, read the same way: quiet.
  const upstream = { cwd, rps: 80, elu: 0.12, cores: 0.13, latencyMs: 200, profiles: [plain] };
  assert.deepEqual(offLoopCpu(syntheticRun({ ...upstream, threadOnCpuCores: 0.1 })), []);
  // A loop thread whose CPU is read in some samples only (the agent worker started late) is not measured.
  const run = syntheticRun({ ...starved, threadOnCpuCores: 0.022 });
  delete run.threads[0].samples[Math.floor(run.threads[0].samples.length / 2)].cpu.threadOnCpu;
  assert.deepEqual(offLoopCpu(run), []);
});

test("off-loop CPU: a kept worker pool the profile never catches handing over is named by the message waits: the pool's entry, not its dispatcher", () => {
  const plain = syntheticCpuProfile([{ name: 'handler', file: 'server.js', line: 3, share: 0.03 }], { cwd, idleShare: 0.9 });
  const at = (fn: string, file: string, line: number) => ({ function: fn, file: `${cwd}/${file}`, line, column: 5 });
  // The dispatcher posts from a queue; the request path entered the pool at run(), from the route.
  const stack = [
    at('#dispatch', 'lib/workers.js', 31),
    at('(anonymous)', 'lib/workers.js', 12),
    at('run', 'lib/workers.js', 11),
    at('(anonymous)', 'routes/quote.js', 7),
  ];
  const opts = { cwd, rps: 40, elu: 0.1, cores: 1.9, latencyMs: 250, profiles: [plain] };
  const waits = (perRequest: number) => [
    { target: 'worker thread', perRequest, msEach: 50, site: stack[0], stack, concurrency: [0.01, 0.03, 0.96] },
  ];
  const [f] = offLoopCpu(syntheticRun({ ...opts, messageWaits: waits(1) }));
  assert.ok(f);
  assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['run', 'lib/workers.js', 11]);
  assert.equal(f.evidence.kind, 'worker-threads');
  assert.equal(f.evidence.sentAt, 'lib/workers.js:31');
  assert.equal(f.evidence.workersInFlight, 2);
  assert.match(
    f.summary,
    /1 message per request, 50 ms on average from the send \(lib\/workers\.js:31\) to the answer, 2 or more in flight 96 % of the time, through run \(lib\/workers\.js:11\), called from \(anonymous\) \(routes\/quote\.js:7\)/,
  );
  assert.match(f.recommendation, /already keeps its workers/);
  assert.doesNotMatch(f.recommendation, /UV_THREADPOOL_SIZE/);
  // A message now and then (a job, not the requests' path) names nothing.
  const [g] = offLoopCpu(syntheticRun({ ...opts, messageWaits: waits(0.1) }));
  assert.ok(g);
  assert.equal(g.culprit, undefined);
  assert.match(g.summary, /did not catch the call/);
});
