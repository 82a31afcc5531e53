// The share of its busy time a run's saturated event loop spent on a CPU, and the ratio between
// two runs at which compare judges the load figures: figures like those of two runs of the same
// pbkdf2Sync login on a busy 2-core machine (0.18 and 0.38 of a core, the loop busy throughout).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { loopCpuShare, machineShare } from '../../src/compare/loop-cpu-share.js';

const near = (x: number | undefined, want: number, tol: number, what: string) =>
  assert.ok(x !== undefined && Math.abs(x - want) <= tol, `${what}: ${x} (want ${want} ± ${tol})`);

test('a loop busy throughout that ran for 0.38 of a core, then 0.18: shares 0.38 and 0.18, a ratio of about 0.47', () => {
  const before = syntheticRun({ seed: 1, rps: 52, elu: 1, cores: 0.4, threadCores: 0.38 });
  const after = syntheticRun({ seed: 2, rps: 21, elu: 1, cores: 0.2, threadCores: 0.18 });
  near(loopCpuShare(before)?.share, 0.38, 0.03, 'before');
  near(loopCpuShare(after)?.share, 0.18, 0.02, 'after');
  const m = machineShare(before, after);
  near(m?.ratio, 0.18 / 0.38, 0.06, 'ratio');
  near(machineShare(after, before)?.ratio, 1 / (m?.ratio ?? NaN), 1e-9, 'the other way round');
});

test("Node 20's on-CPU time read from /proc (in lumps) gives the same share over the window", () => {
  near(loopCpuShare(syntheticRun({ seed: 3, elu: 0.9, cores: 0.5, threadOnCpuCores: 0.45 }))?.share, 0.5, 0.05, 'share');
});

test('runs whose loops got the same share of a CPU: a ratio of 1', () => {
  const m = machineShare(
    syntheticRun({ seed: 4, elu: 1, cores: 0.95, threadCores: 0.9 }),
    syntheticRun({ seed: 5, rps: 200, elu: 0.95, cores: 0.9, threadCores: 0.85 }),
  );
  near(m?.ratio, 1, 0.06, 'ratio');
});

test("the server's own threads taking the cores (a thread pool beside the loop): no machine share", () => {
  // The async twin of the pbkdf2 login: its loop busy 0.7 of the time, on a CPU for 0.07 of a
  // core, its pool threads using 0.4 cores: the loop waits for its own process, not the machine.
  const pool = syntheticRun({ seed: 6, elu: 0.7, cores: 0.5, threadCores: 0.07 });
  assert.equal(loopCpuShare(pool), undefined);
  assert.equal(machineShare(syntheticRun({ seed: 7, elu: 1, cores: 0.4, threadCores: 0.38 }), pool), undefined);
});

test('a loop that is not the bottleneck (idle, or waiting on I/O half the time), or a run without the thread CPU: no share', () => {
  assert.equal(loopCpuShare(syntheticRun({ seed: 8, elu: 0.05, cores: 0.05, threadCores: 0.04 })), undefined);
  assert.equal(loopCpuShare(syntheticRun({ seed: 10, elu: 0.5, cores: 0.3, threadCores: 0.28 })), undefined);
  assert.equal(loopCpuShare(syntheticRun({ seed: 9, elu: 1, cores: 0.9 })), undefined);
});
