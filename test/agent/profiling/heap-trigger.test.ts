import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HeapTrigger, TRIGGER_EVERY_MS, TRIGGER_GROWTH_BYTES } from '../../../src/agent/profiling/heap-trigger.js';
import type { GcEvent } from '../../../src/agent/protocol.js';

const MB = 1024 * 1024;
const gc = (durationMs: number): GcEvent => ({ kind: 'minor', start: 0, durationMs, flags: 0 });

let reason: string | undefined;

/** Feeds `seconds` of 100 ms intervals, each with `gcMs` of observed GC, the old generation at `old(t)`; the time it fired (and `reason`), if it did. */
function feed(
  trigger: HeapTrigger,
  seconds: number,
  gcMs: number,
  oldAt: (t: number) => number,
  heap: { old: number },
): number | undefined {
  for (let t = 100; t <= seconds * 1000; t += 100) {
    heap.old = oldAt(t);
    reason = trigger.observe(t, gcMs > 0 ? [gc(gcMs)] : [], 100);
    if (reason !== undefined) return t;
  }
  return undefined;
}

test('heap trigger: GC taking 8 % of the observed time starts the sampler at the first check with a few GCs seen', () => {
  const heap = { old: 20 * MB };
  const t = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  t.arm(0);
  const at = feed(t, 5, 8, () => 20 * MB, heap);
  assert.equal(at, TRIGGER_EVERY_MS);
  assert.equal(reason, 'gc');
  // 4 % is below the share: never.
  const light = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  light.arm(0);
  assert.equal(
    feed(light, 5, 4, () => 20 * MB, heap),
    undefined,
  );
  assert.equal(
    feed(t, 5, 8, () => 20 * MB, heap),
    undefined,
    'once per profile',
  );
});

test('heap trigger: a growing old generation starts it; a flat heap with light GC never does', () => {
  const heap = { old: 20 * MB };
  const growing = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  growing.arm(0);
  // 2 MiB a second with 1 % GC: the growth decides, after about 2 s.
  const at = feed(growing, 5, 1, (ms) => 20 * MB + (ms / 1000) * 2 * MB, heap);
  assert.ok(at !== undefined && at >= (TRIGGER_GROWTH_BYTES / (2 * MB)) * 1000, `fired at ${at}`);
  assert.equal(reason, 'growth');
  const flat = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  flat.arm(0);
  // Up and down by 3 MiB (young objects promoted, then collected): below the growth threshold.
  assert.equal(
    feed(flat, 10, 2, (ms) => 20 * MB + (Math.floor(ms / 700) % 2) * 3 * MB, heap),
    undefined,
  );
});

test('heap trigger: growth before the GC share could be judged, or beside GC pressure, asks for both views', () => {
  // A short load's warm-up: 4 MiB promoted in the first half second, while GCs were observed for
  // 50 ms of it (the agent observes them in slices): whose garbage the GC is cannot be told yet.
  const heap = { old: 20 * MB };
  const early = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  early.arm(0);
  for (let t = 100; t <= 400; t += 100) {
    heap.old = 20 * MB + t * 12 * 1024;
    assert.equal(early.observe(t, [], 0), undefined);
  }
  heap.old = 25 * MB;
  assert.equal(early.observe(500, [gc(3), gc(3)], 50), 'growth-gc');
  // Growth with GC taking 8 % of a judged observed time: both.
  heap.old = 20 * MB;
  const both = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  both.arm(0);
  feed(both, 5, 8, (ms) => 20 * MB + ms * 10 * 1024, heap);
  assert.equal(reason, 'growth-gc');
});

test('heap trigger: nothing before arm() or after disarm(), and a throwing heap reading is no growth', () => {
  const heap = { old: 20 * MB };
  const t = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  assert.equal(
    feed(t, 3, 50, () => 20 * MB, heap),
    undefined,
    'not armed',
  );
  t.arm(0);
  t.disarm();
  assert.equal(
    feed(t, 3, 50, () => 20 * MB, heap),
    undefined,
    'disarmed',
  );
  const broken = new HeapTrigger(() => {
    throw new Error('no statistics');
  });
  broken.arm(0);
  assert.equal(
    feed(broken, 3, 0, () => 0, heap),
    undefined,
  );
});

test('heap trigger: the heap the mid-load full GC left 5 % above the lowest reading starts the retained sampler, densely, once', () => {
  const heap = { old: 10 * MB };
  const t = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  assert.equal(t.liveAfterFullGc(20 * MB), undefined, 'not armed: no profile runs');
  t.arm(0);
  t.countRequests(499);
  assert.equal(t.liveAfterFullGc(20 * MB), undefined, 'too few requests to judge');
  t.countRequests(1);
  // 10.4 MB is 4 % above the lowest reading: a warm-up's size, nothing asked.
  assert.equal(t.liveAfterFullGc(10.4 * MB), undefined);
  assert.equal(t.liveAfterFullGc(10.6 * MB), 'live-growth');
  assert.equal(t.liveAfterFullGc(12 * MB), undefined, 'once per profile');
  // 2 MB over 10,000 requests is 200 bytes a request: a warm-up spread over the load, nothing asked.
  const warm = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  warm.arm(0);
  warm.countRequests(6000);
  warm.countRequests(4000);
  assert.equal(warm.liveAfterFullGc(12 * MB), undefined);
  assert.equal(warm.liveAfterFullGc(15 * MB), 'live-growth', '500 KB a request');
  // Already started by growth or GC pressure: nothing more.
  const fired = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  fired.arm(0);
  assert.equal(feed(fired, 2, 0, (ms) => 10 * MB + ms * 5 * 1024, heap) !== undefined, true);
  assert.equal(fired.liveAfterFullGc(20 * MB), undefined);
});

test('heap trigger: Buffers kept per request (external memory) after a full GC start the retained sampler, the heap flat', () => {
  // 4 KB of external memory kept per request and a few dozen bytes of heap: 1,000 requests after
  // the start, a full GC of V8's own left the heap where it was and the Buffers' bytes 4 MB higher.
  const mem = { old: 10 * MB, external: 2 * MB };
  const t = new HeapTrigger(
    () => mem.old,
    () => mem.external,
  );
  t.arm(0);
  t.countRequests(1000);
  mem.external = 2.3 * MB;
  assert.equal(t.liveAfterFullGc(10.05 * MB), undefined, 'garbage-sized: 300 bytes a request, 3 % of what was held');
  mem.external = 6 * MB;
  assert.equal(t.liveAfterFullGc(10.05 * MB, false), 'growth', "after one of V8's own full GCs: the sparse sampler");
  assert.equal(t.liveAfterFullGc(10.05 * MB), undefined, 'once per profile');
  // The heap alone (as read before) had risen 0.5 %: nothing would have been asked.
  const heapOnly = new HeapTrigger(
    () => mem.old,
    () => Number.NaN,
  );
  heapOnly.arm(0);
  heapOnly.countRequests(1000);
  assert.equal(heapOnly.liveAfterFullGc(10.05 * MB), undefined);
});

/** `seconds` of 100 ms intervals at `elu`, the loop thread getting `cpuPerActive` of its active time, with `events(t)` observed; when it fired. */
function feedLoop(
  trigger: HeapTrigger,
  seconds: number,
  elu: number,
  cpuPerActive: number | undefined,
  events: (t: number) => GcEvent[],
): number | undefined {
  for (let t = 100; t <= seconds * 1000; t += 100) {
    trigger.loop(100, elu, cpuPerActive === undefined ? undefined : 100 * elu * cpuPerActive);
    reason = trigger.observe(t, events(t), 100);
    if (reason !== undefined) return t;
  }
  return undefined;
}

test('heap trigger: GC time on a target kept off the cores is judged as free cores would show it', () => {
  const flat = (): HeapTrigger => {
    const t = new HeapTrigger(
      () => 20 * MB,
      () => 0,
    );
    t.arm(0);
    return t;
  };
  // A quiet server (ELU 0.1) descheduled inside its scavenges: 8 % of the wall time in GC, its
  // loop thread on a core for a fifth of its active time: about 2 % on free cores, no sampler.
  assert.equal(
    feedLoop(flat(), 5, 0.1, 0.2, () => [gc(8)]),
    undefined,
  );
  // The same figures with the thread on the cores all along, or its CPU not read: GC pressure.
  assert.equal(
    feedLoop(flat(), 5, 0.1, 1, () => [gc(8)]),
    TRIGGER_EVERY_MS,
  );
  assert.equal(
    feedLoop(flat(), 5, 0.1, undefined, () => [gc(8)]),
    TRIGGER_EVERY_MS,
  );
  // A saturated loop keeps its share however starved (it would only do more work in the window).
  assert.equal(
    feedLoop(flat(), 5, 1, 0.2, () => [gc(8)]),
    TRIGGER_EVERY_MS,
  );
  assert.equal(reason, 'gc');
});

test('heap trigger: a GC kind seen fewer than 3 times is a pause, not pressure', () => {
  const t = new HeapTrigger(
    () => 20 * MB,
    () => 0,
  );
  t.arm(0);
  // Two 60 ms major GCs of an idle heap (V8's memory reducer) beside light scavenges: 12 % of the
  // first second's wall time, but no rate of GC.
  const events = (ms: number): GcEvent[] => [gc(0.5), ...(ms === 200 || ms === 600 ? [{ ...gc(60), kind: 'major' as const }] : [])];
  assert.equal(feedLoop(t, 5, 0.05, undefined, events), undefined);
  // A third one makes them a rate (at the check after it: 300, 600, 900 ms).
  const three = new HeapTrigger(
    () => 20 * MB,
    () => 0,
  );
  three.arm(0);
  assert.equal(
    feedLoop(three, 5, 0.05, undefined, (ms) => [gc(0.5), ...(ms % 300 === 0 ? [{ ...gc(60), kind: 'major' as const }] : [])]),
    2 * TRIGGER_EVERY_MS,
  );
});

test('heap trigger: with a mid-load GC to come, the old generation rising with garbage waits for its live reading', () => {
  // 5 MiB a second of promoted garbage, 1 % GC: the rough reading rises 4 MiB in under a second.
  const heap = { old: 6 * MB };
  const garbage = (ms: number) => 6 * MB + (ms / 1000) * 5 * MB;
  const t = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  t.arm(0, 2000);
  assert.equal(feed(t, 1.9, 1, garbage, heap), undefined, 'before the mid-load GC: nothing asked');
  t.countRequests(2500);
  // The forced GC: the live heap 0.3 MB above the start, over 2,500 requests (120 bytes each).
  heap.old = 6.3 * MB;
  assert.equal(t.liveAfterFullGc(6.3 * MB), undefined);
  // The garbage piles up again: the live reading was judged, the rough one no longer decides.
  assert.equal(
    feed(t, 4, 1, (ms) => 6.3 * MB + (ms / 1000) * 5 * MB, heap),
    undefined,
  );
  // A later full GC of V8's own that finds the live heap grown still does.
  t.countRequests(2500);
  assert.equal(t.liveAfterFullGc(9 * MB, false), 'growth');

  // Past the time of the mid-load GC without a reading (a heap too large to force one): the rough reading decides again.
  const big = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  heap.old = 80 * MB;
  big.arm(0, 1000);
  const at = feed(big, 4, 1, (ms) => 80 * MB + (ms / 1000) * 5 * MB, heap);
  assert.ok(at !== undefined && at >= 1000, `fired at ${at}`);
  assert.equal(reason, 'growth');

  // A megabyte a request (a leak this fast is no garbage): it decides at once, mid-load GC to come or not.
  heap.old = 6 * MB;
  const leak = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  leak.arm(0, 5000);
  leak.countRequests(5);
  const early = feed(leak, 2, 1, (ms) => 6 * MB + (ms / 1000) * 10 * MB, heap);
  assert.ok(early !== undefined && early < 5000, `fired at ${early}`);
  assert.equal(reason, 'growth');

  // Beside GC pressure, growth before the mid-load GC still asks for both views at once.
  const pressed = new HeapTrigger(
    () => heap.old,
    () => 0,
  );
  heap.old = 6 * MB;
  pressed.arm(0, 5000);
  assert.ok(feed(pressed, 2, 10, (ms) => 6 * MB + (ms / 1000) * 10 * MB, heap) !== undefined);
  assert.equal(reason, 'growth-gc');
});

test("heap trigger: the GCs of the agent's own full GC are no GC pressure of the app's", () => {
  // A quiet server: a scavenge of 0.2 ms per 100 ms, then the mid-load GC of 45 ms, several major
  // GCs in a row (V8's memory-reducing sequence): counted, they are 10 % of the time GCs were observed.
  const heap = { old: 6 * MB };
  const make = () =>
    new HeapTrigger(
      () => heap.old,
      () => 0,
    );
  const major = (start: number, durationMs: number): GcEvent => ({ kind: 'major', start, durationMs, flags: 0 });
  const run = (t: HeapTrigger, excluded: boolean): string | undefined => {
    t.arm(0, 1000);
    if (excluded) t.agentFullGc(1000, 1045);
    for (let at = 100; at <= 3000; at += 100) {
      const events = [gc(0.2)];
      if (at === 1100) events.push(major(1000, 15), major(1015, 15), major(1030, 15));
      // GCs observed in slices: 30 ms of every 100 (a share of what was observed).
      const r = t.observe(at, events, 30);
      if (r !== undefined) return r;
    }
    return undefined;
  };
  assert.equal(run(make(), true), undefined, 'the forced GC left out: a quiet server asks nothing');
  assert.equal(run(make(), false), 'gc', 'what the same GCs read as when counted');
});
