// loop-yields: requests that await a setImmediate per item keep immediates queued at every
// sample, so the loop never sleeps; the finding names the async function that yields (through
// its helper), event-loop-blocking gives way, and a loop that sleeps between requests, or whose
// immediates are not the requests', stays quiet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loopYields } from '../../src/analyze/loop-yields.js';
import { eventLoopBlocking } from '../../src/analyze/event-loop-blocking.js';
import { loopStats } from '../../src/analyze/signals/loop-stats.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { syntheticCpuProfile, type SyntheticFunction } from '../fixtures/telemetry/synthetic-profile.js';

const cwd = '/srv/shop';
/** A handler whose answer costs the most between two yields, and an async loop yielding per rule through a helper. */
const helperLoop: SyntheticFunction[] = [
  { name: 'handleCart', file: 'server.js', line: 6, share: 0.3, callee: { name: 'writev', file: '', share: 0.15 } },
  { name: 'applyDiscounts', file: 'lib/pricing.js', line: 8, share: 0.1, via: { name: 'runMicrotasks', file: '' } },
  { name: 'yieldToLoop', file: 'lib/pricing.js', line: 4, share: 0.03, calledBy: 'applyDiscounts' },
  {
    name: '(anonymous in yieldToLoop)',
    file: 'lib/pricing.js',
    line: 4,
    share: 0.01,
    calledBy: 'yieldToLoop',
    callee: { name: 'setImmediate', file: 'node:timers', share: 0.01 },
  },
];
// The profile marks the zero-timeout polls (idle): half the samples, although the loop never slept.
const profileOf = (fns: SyntheticFunction[]) => syntheticCpuProfile(fns, { cwd, idleShare: 0.5 });
const spinning = { cwd, rps: 640, elu: 1, cores: 1, eldP99Ms: 5, latencyMs: 30, inFlight: 19, resources: { Immediate: 19 } };

test('loop yields: an async loop awaiting a setImmediate per item through a helper is named, with the helper', () => {
  const run = syntheticRun({ ...spinning, profiles: [profileOf(helperLoop)] });
  const [f] = loopYields(run);
  assert.ok(f, 'a finding');
  assert.equal(f.code, 'HOTPATH_LOOP_YIELDS');
  assert.equal(f.category, 'event-loop-blocking');
  assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['applyDiscounts', 'lib/pricing.js', 8]);
  assert.equal((f.evidence.through as { function: string }).function, 'yieldToLoop');
  assert.equal(f.evidence.immediatesQueuedShare, 1);
  assert.match(f.summary, /the loop never waited for I\/O/);
  assert.match(f.summary, /applyDiscounts \(lib\/pricing\.js:8\) queues them through yieldToLoop \(lib\/pricing\.js:4\)/);
  assert.match(f.recommendation, /not between items/);
  // The profile's idle samples were polls: the loop counts as saturated, as ELU said.
  assert.ok(loopStats(run)!.eluMean > 0.95);
  // Blocking gives way: its culprit would be the handler, which ran most between two yields.
  assert.deepEqual(eventLoopBlocking(run), []);
});

test('loop yields: an immediate queued inline, or by a callback that re-queues itself, names that function', () => {
  const inline: SyntheticFunction[] = [
    { name: 'handleCart', file: 'server.js', line: 6, share: 0.3 },
    { name: 'scoreItems', file: 'lib/score.js', line: 3, share: 0.1, via: { name: 'runMicrotasks', file: '' } },
    {
      name: '(anonymous in scoreItems)',
      file: 'lib/score.js',
      line: 7,
      share: 0.01,
      calledBy: 'scoreItems',
      callee: { name: 'setImmediate', file: 'node:timers', share: 0.01 },
    },
  ];
  const [f] = loopYields(syntheticRun({ ...spinning, profiles: [profileOf(inline)] }));
  assert.equal(f?.culprit?.function, 'scoreItems');
  assert.equal(f?.evidence.through, undefined);
  const callbacks: SyntheticFunction[] = [
    { name: 'handleCart', file: 'server.js', line: 6, share: 0.3 },
    {
      name: 'processNextChunk',
      file: 'lib/export.js',
      line: 12,
      share: 0.1,
      via: { name: 'processImmediate', file: 'node:internal/timers' },
      callee: { name: 'setImmediate', file: 'node:timers', share: 0.01 },
    },
  ];
  const [g] = loopYields(syntheticRun({ ...spinning, profiles: [profileOf(callbacks)] }));
  assert.equal(g?.culprit?.function, 'processNextChunk');
});

test('loop yields: a busy machine, whose preemptions inside the zero-timeout polls ELU books as idle, changes nothing', () => {
  // The thread got 43 % of a core and ELU read 0.67 (seen beside one spinning process per core):
  // the immediates queued at every sample still kept every poll from waiting.
  const run = syntheticRun({ ...spinning, elu: 0.67, cores: 0.43, rps: 480, profiles: [profileOf(helperLoop)] });
  const [f] = loopYields(run);
  assert.equal(f?.code, 'HOTPATH_LOOP_YIELDS');
  assert.equal(f.culprit?.function, 'applyDiscounts');
  assert.ok(Math.abs((f.evidence.eluMean as number) - 0.67) < 0.05, String(f.evidence.eluMean));
  assert.deepEqual(eventLoopBlocking(run), []);
  // A third of the samples found no request in flight and no immediate (a starved load generator
  // sent the next requests late): the samples that found requests all found their immediates.
  const gaps = (p: number) => ((p * 12) % 1 < 0.3 ? 0 : 19);
  const late = syntheticRun({
    ...spinning,
    elu: 0.67,
    cores: 0.43,
    inFlight: gaps,
    resourcesAt: (p) => ({ Immediate: gaps(p) }),
    profiles: [profileOf(helperLoop)],
  });
  assert.equal(loopYields(late)[0]?.code, 'HOTPATH_LOOP_YIELDS');
  assert.equal(loopYields(late)[0]?.evidence.immediatesQueuedShare, 1);
});

test('loop yields: quiet when the loop sleeps, when few immediates are queued, or without requests in flight to queue them', () => {
  const profiles = [profileOf(helperLoop)];
  // Immediates at some samples only (a stream's occasional setImmediate).
  assert.deepEqual(
    loopYields(
      syntheticRun({
        ...spinning,
        resources: {},
        resourcesAt: (p): Record<string, number> => (p < 0.3 ? { Immediate: 19 } : {}),
        profiles,
      }),
    ),
    [],
  );
  // Requests in flight at a few samples only, each with its immediates: a loop that mostly slept, not a loaded one.
  const few = (p: number) => ((p * 12) % 1 < 0.3 ? 19 : 0);
  assert.deepEqual(loopYields(syntheticRun({ ...spinning, inFlight: few, resourcesAt: (p) => ({ Immediate: few(p) }), profiles })), []);
  // One immediate queued all along (a background job) against 19 requests in flight: not the requests'.
  assert.deepEqual(loopYields(syntheticRun({ ...spinning, resources: { Immediate: 1 }, profiles })), []);
  // No profile: no culprit to name, so no finding (blocking and the healthy note speak for the loop).
  assert.deepEqual(loopYields(syntheticRun({ ...spinning })), []);
});
