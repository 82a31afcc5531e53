import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventLoopBlocking } from '../../src/analyze/event-loop-blocking.js';
import { loopStats } from '../../src/analyze/signals/loop-stats.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

// A cheap, busy file server (0.18 ms per request, ELU 0.8) whose loop delay spikes to 650 ms in the
// samples of one 1,066 ms stall. The agent read the thread's CPU over it: 30 ms in 1,000 ms when other
// processes kept it off the cores (preempted), 990 ms when its own work held it.
function fileServer(seed: number, noise: number, threadCpuMs: number) {
  return syntheticRun({
    seed,
    noise,
    rps: 2800,
    elu: 0.8,
    cores: 0.5,
    eldP99Ms: (p) => (p > 0.5 && p <= 0.6 ? 650 : 20),
    stalls: [{ atProgress: 0.5, durationMs: 1066, threadCpuMs, threadCpuOverMs: 1000 }],
  });
}

for (const noise of NOISE_LEVELS) {
  test(`blocking: the loop delay of a stall the machine caused (preempted) is no block of the app's (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const preempted = fileServer(seed, noise, 30);
      assert.ok(loopStats(preempted)!.eldP99Ms < 100, `seed ${seed}: delay p99 ${loopStats(preempted)!.eldP99Ms}`);
      assert.deepEqual(eventLoopBlocking(preempted), [], `seed ${seed}`);
      // The same delay from a stall the thread ran through is its own: blocked.
      const [f] = eventLoopBlocking(fileServer(seed, noise, 990));
      assert.equal(f?.category, 'event-loop-blocking', `seed ${seed}`);
    }
  });
}

// A cheap restify-like route (0.05 ms per request, the loop half busy) whose loop delay reads 140 ms
// in one sample of a 2 s run, too short for the stall watchdog (250 ms). The thread's own CPU in the
// samples the delay built up in: next to nothing when other processes kept it off the cores, all of
// the loop's active time when its own work held it.
function cheapRoute(seed: number, noise: number, threadCoresInDelay: number) {
  const inDelay = (p: number) => p > 0.4 && p <= 0.6;
  return syntheticRun({
    seed,
    noise,
    durationS: 2,
    rps: 6000,
    elu: 0.6,
    cores: 0.4,
    threadCores: (p) => (inDelay(p) ? threadCoresInDelay : 0.4),
    eldP99Ms: (p) => (p > 0.5 && p <= 0.6 ? 140 : 8),
  });
}

for (const noise of NOISE_LEVELS) {
  test(`blocking: a delay shorter than a stall, built up while the thread ran next to nothing, is the machine's (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const preempted = cheapRoute(seed, noise, 0.05);
      assert.ok(loopStats(preempted)!.eldP99Ms < 100, `seed ${seed}: delay p99 ${loopStats(preempted)!.eldP99Ms}`);
      assert.deepEqual(eventLoopBlocking(preempted), [], `seed ${seed}`);
      // The same delay while the thread ran all along is its own.
      const held = cheapRoute(seed, noise, 0.6);
      assert.ok(loopStats(held)!.eldP99Ms >= 100, `seed ${seed}: delay p99 ${loopStats(held)!.eldP99Ms}`);
      assert.equal(eventLoopBlocking(held)[0]?.category, 'event-loop-blocking', `seed ${seed}`);
    }
  });
}
