// The stall watchdog on a heartbeat this test writes itself: a missed heartbeat is reported
// while it lasts and then with its duration; one that overlaps the agent's own work on the
// main thread (stopping profiles) is marked byAgent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Session } from 'node:inspector';
import { BLOCKED_BEFORE_AGENT_MS, STALL_THRESHOLD_MS, StallWatchdog } from '../../../src/agent/worker/stall-watchdog.js';
import { StallCause } from '../../../src/agent/worker/stall-cause.js';
import { watchedThreadCpu } from '../../../src/agent/worker/own-cpu.js';
import { epochNow } from '../../../src/agent/clock.js';
import type { StallMessage } from '../../../src/agent/protocol.js';

type Body = Omit<StallMessage, 'v' | 'pid' | 'threadId' | 't'>;

async function missBeats(
  blockMs: number,
  during?: (dog: StallWatchdog) => void,
  threadCpu?: () => number | undefined,
  cause?: StallCause,
): Promise<Body[]> {
  const heartbeat = new SharedArrayBuffer(8);
  const beat = new Float64Array(heartbeat);
  const sent: Body[] = [];
  const dog = new StallWatchdog(heartbeat, (b) => sent.push(b), cause, threadCpu);
  dog.start();
  try {
    for (let i = 0; i < 3; i++) {
      beat[0] = epochNow();
      await sleep(50);
    }
    during?.(dog);
    await sleep(blockMs);
    // One beat ends the block (the watchdog reads only the latest beat, so more beats would move
    // the end it sees); stop as soon as the final report is out, before the silence after this
    // beat could pass for a second stall on a slow machine.
    beat[0] = epochNow();
    for (const end = Date.now() + 3000; Date.now() < end && !sent.some((b) => !b.ongoing);) await sleep(10);
  } finally {
    dog.stop();
  }
  return sent;
}

test("a missed heartbeat: ongoing reports, then the final duration, not the agent's", async () => {
  const sent = await missBeats(700);
  assert.ok(
    sent.some((b) => b.ongoing),
    'reported while it lasted',
  );
  const final = sent.find((b) => !b.ongoing);
  assert.ok(final && final.durationMs >= 650 && final.durationMs < 1500, JSON.stringify(sent));
  assert.ok(sent.every((b) => b.byAgent === undefined));
});

test('a block while the agent stops its profiles is marked byAgent, ongoing and final', async () => {
  const sent = await missBeats(700, (dog) => {
    dog.agentWork(true);
    setTimeout(() => dog.agentWork(false), 600);
  });
  assert.ok(sent.length >= 2 && sent.some((b) => !b.ongoing), JSON.stringify(sent));
  assert.ok(
    sent.every((b) => b.byAgent === 'profile-stop'),
    JSON.stringify(sent),
  );
});

test('agent work that ended before the block began does not mark it', async () => {
  const sent = await missBeats(700, (dog) => {
    dog.agentWork(true);
    dog.agentWork(false);
  });
  const final = sent.find((b) => !b.ongoing);
  assert.ok(final, JSON.stringify(sent));
  assert.equal(final.byAgent, undefined);
});

test('agent work that begins once the loop has been blocked for a second does not mark it (the loop was blocked already)', async () => {
  assert.equal(BLOCKED_BEFORE_AGENT_MS, 1000);
  const sent = await missBeats(2000, (dog) => {
    // The agent's work (stopping the profiles at the end of the load) comes 1.35 s into the block.
    setTimeout(() => {
      dog.agentWork(true);
      setTimeout(() => dog.agentWork(false), 300);
    }, 1300);
  });
  assert.ok(
    sent.some((b) => !b.ongoing),
    JSON.stringify(sent),
  );
  assert.ok(
    sent.every((b) => b.byAgent === undefined),
    JSON.stringify(sent),
  );
});

function spinStuck(ms: number): number {
  let x = 0;
  for (const end = Date.now() + ms; Date.now() < end;) x += Math.sqrt(x + 1);
  return x;
}

/**
 * A watchdog of this very thread's heartbeat that samples this thread: what it runs while the
 * heartbeat is silent is the stall's cause. `connects`: the sessions its cause opened.
 */
function watchThisThread(): { beat: Float64Array; sent: Body[]; dog: StallWatchdog; connects: () => number } {
  const heartbeat = new SharedArrayBuffer(8);
  const sent: Body[] = [];
  const { cause, connects } = countedCause();
  return { beat: new Float64Array(heartbeat), sent, dog: new StallWatchdog(heartbeat, (b) => sent.push(b), cause), connects };
}

test('a stall still under way at the flush is sent with its stacks so far; sampling goes on for the final report', async () => {
  const { beat, sent, dog } = watchThisThread();
  dog.start();
  try {
    beat[0] = epochNow();
    for (const end = Date.now() + 5000; Date.now() < end && sent.length === 0;) await sleep(20);
    assert.ok(sent[0]?.ongoing, 'the stall was seen');
    spinStuck(400);
    await new Promise<void>((resolve) => dog.reportUnderWay(2000, resolve));
    const underWay = sent.find((b) => b.cause !== undefined);
    assert.ok(underWay, JSON.stringify(sent));
    assert.equal(underWay.ongoing, true, 'still under way');
    assert.equal(underWay.byAgent, undefined);
    assert.ok(
      underWay.cause?.some((c) => c.stack[0]?.function === 'spinStuck'),
      JSON.stringify(underWay.cause),
    );
    // Each later report replaces the last (read-telemetry.ts): it repeats the stacks so far.
    const before = sent.length;
    for (const end = Date.now() + 3000; Date.now() < end && sent.length === before;) await sleep(20);
    const later = sent.at(-1);
    assert.ok(later && later !== underWay && later.ongoing && later.cause !== undefined, JSON.stringify(sent));
    // The loop comes back after all: the final report has a cause too (sampling went on).
    spinStuck(200);
    beat[0] = epochNow();
    for (const end = Date.now() + 3000; Date.now() < end && !sent.some((b) => !b.ongoing);) await sleep(10);
    const final = sent.find((b) => !b.ongoing);
    assert.ok(final && final.durationMs >= underWay.durationMs, JSON.stringify(sent));
    // spinStuck, or the test's function it is now inlined into (V8 optimised it by then).
    assert.ok(
      final.cause?.some((c) => c.stack[0]?.file.includes('stall-watchdog.test')),
      JSON.stringify(final.cause),
    );
  } finally {
    dog.stop();
  }
});

test("a block that outlasts the profiler prime is the app's from then on: sampled, its final report names what blocked", async () => {
  const { beat, sent, dog } = watchThisThread();
  dog.start();
  try {
    beat[0] = epochNow();
    // The agent's work (the profiler prime at listen) holds the thread as the block begins.
    dog.agentWork(true, 'profiler-prime');
    for (const end = Date.now() + 5000; Date.now() < end && sent.length === 0;) await sleep(20);
    assert.equal(sent[0]?.byAgent, 'profiler-prime', JSON.stringify(sent));
    dog.agentWork(false, 'profiler-prime');
    // The agent's work is over and the thread still does not beat: past the slack, it is the app's.
    await sleep(400);
    spinStuck(300);
    beat[0] = epochNow();
    for (const end = Date.now() + 3000; Date.now() < end && !sent.some((b) => !b.ongoing);) await sleep(10);
    const final = sent.find((b) => !b.ongoing);
    assert.ok(final, JSON.stringify(sent));
    assert.equal(final.byAgent, undefined, JSON.stringify(final));
    assert.ok(
      final.cause?.some((c) => c.stack[0]?.file.includes('stall-watchdog.test')),
      JSON.stringify(final.cause),
    );
  } finally {
    dog.stop();
  }
});

test("a block that outlasts the agent's work at the end of the run (profiles stopped) stays unsampled", async () => {
  const { beat, sent, dog, connects } = watchThisThread();
  dog.start();
  try {
    beat[0] = epochNow();
    dog.agentWork(true, 'profile-stop');
    for (const end = Date.now() + 5000; Date.now() < end && sent.length === 0;) await sleep(20);
    assert.equal(sent[0]?.byAgent, 'profile-stop', JSON.stringify(sent));
    dog.agentWork(false, 'profile-stop');
    await sleep(400);
    beat[0] = epochNow();
    for (const end = Date.now() + 3000; Date.now() < end && !sent.some((b) => !b.ongoing);) await sleep(10);
    const final = sent.find((b) => !b.ongoing);
    assert.ok(final, JSON.stringify(sent));
    assert.equal(final.cause, undefined, JSON.stringify(final));
    assert.equal(connects(), 0, 'never sampled');
  } finally {
    dog.stop();
  }
});

test('with no stall under way, the flush report is nothing', async () => {
  const dog = new StallWatchdog(new SharedArrayBuffer(8), () => assert.fail('nothing to send'));
  await new Promise<void>((resolve) => dog.reportUnderWay(1000, resolve));
});

test('a stall carries the CPU the watched thread got while it lasted: all of it for a block, none for a thread kept off the cores', async () => {
  // The watched thread's CPU clock, as the test drives it: running (it follows the wall clock) or preempted (it stands still).
  let running = true;
  let cpu = 0;
  let last = Date.now();
  const clock = () => {
    const now = Date.now();
    if (running) cpu += now - last;
    last = now;
    return cpu;
  };
  const blocked = (await missBeats(700, undefined, clock)).find((b) => !b.ongoing);
  assert.ok(blocked?.threadCpuMs !== undefined && blocked.threadCpuOverMs !== undefined, JSON.stringify(blocked));
  assert.ok(blocked.threadCpuOverMs >= 100, JSON.stringify(blocked));
  assert.ok(blocked.threadCpuMs >= 0.9 * blocked.threadCpuOverMs, JSON.stringify(blocked));
  running = false;
  const preempted = (await missBeats(700, undefined, clock)).find((b) => !b.ongoing);
  assert.ok(preempted?.threadCpuOverMs !== undefined && preempted.threadCpuOverMs >= 100, JSON.stringify(preempted));
  assert.equal(preempted.threadCpuMs, 0);
  // Without a readable clock (not Linux, a worker thread), nothing is claimed.
  const unknown = (await missBeats(700, undefined, () => undefined)).find((b) => !b.ongoing);
  assert.ok(unknown && unknown.threadCpuMs === undefined && unknown.threadCpuOverMs === undefined, JSON.stringify(unknown));
});

/** The watched thread's CPU clock, as a test drives it: running (it follows the wall clock) or preempted (it stands still). */
function drivenClock(): { read: () => number; running: boolean } {
  let cpu = 0;
  let last = Date.now();
  const clock = {
    running: true,
    read: () => {
      const now = Date.now();
      if (clock.running) cpu += now - last;
      last = now;
      return cpu;
    },
  };
  return clock;
}

/** A stall-cause sampler on this thread, and how many times it connected its profiler session. */
function countedCause(): { cause: StallCause; connects: () => number } {
  let connects = 0;
  const cause = new StallCause(() => {
    connects++;
    const session = new Session();
    session.connect();
    return session;
  });
  return { cause, connects: () => connects };
}

test("a thread kept off the cores is not sampled for a cause (V8's profiler on a thread that waits for a core costs it for nothing); one that runs through the silence is", async () => {
  for (const running of [false, true]) {
    const clock = drivenClock();
    clock.running = running;
    const { cause, connects } = countedCause();
    const sent = await missBeats(700, undefined, clock.read, cause);
    const final = sent.find((b) => !b.ongoing);
    assert.ok(final?.threadCpuOverMs !== undefined, JSON.stringify(sent));
    assert.equal(connects(), running ? 1 : 0, `running ${running}: ${JSON.stringify(sent)}`);
    if (!running) assert.equal(final.cause, undefined);
  }
});

test('a stall first read as a preemption is sampled once the thread runs through it (a block on a starved machine)', async () => {
  const clock = drivenClock();
  clock.running = false;
  const { cause, connects } = countedCause();
  // Kept off the cores for the first 400 ms of the silence, then running its own code for 600 ms.
  const sent = await missBeats(
    1000,
    () => {
      setTimeout(() => {
        clock.read();
        clock.running = true;
      }, 400);
    },
    clock.read,
    cause,
  );
  assert.ok(
    sent.some((b) => !b.ongoing),
    JSON.stringify(sent),
  );
  assert.equal(connects(), 1, JSON.stringify(sent));
});

test("watchedThreadCpu: the main thread's own CPU on Linux (it advances while this thread computes), nothing for a worker thread", () => {
  assert.equal(watchedThreadCpu(1), undefined, "a worker thread's tid is not known");
  const read = watchedThreadCpu(0);
  if (process.platform !== 'linux') return assert.equal(read, undefined);
  assert.ok(read, 'readable on Linux');
  const from = read()!;
  let x = 0;
  // Compute until the clock has moved (bounded): a busy machine only makes it take longer.
  for (const end = Date.now() + 20_000; Date.now() < end && read()! - from < 30;) for (let i = 0; i < 1e5; i++) x = (x * 31 + i) % 1000003;
  assert.ok(read()! - from >= 30, `moved ${read()! - from} ms (${x})`);
});

test('while the thread beats every 100 ms the watchdog checks about every 200 ms, not at every beat (each check wakes the target core)', async () => {
  assert.equal(STALL_THRESHOLD_MS, 250);
  const heartbeat = new SharedArrayBuffer(8);
  const beat = new Float64Array(heartbeat);
  beat[0] = epochNow();
  const stalls: Body[] = [];
  const dog = new StallWatchdog(heartbeat, (b) => stalls.push(b));
  let checks = 0;
  const beats = setInterval(() => {
    beat[0] = epochNow();
  }, 100);
  dog.start(() => checks++);
  try {
    await sleep(2000);
  } finally {
    dog.stop();
    clearInterval(beats);
  }
  // A check can find no stall before the last beat is 250 ms old: ≈ 10 checks in 2 s, 20 at every beat.
  // A busy machine fires the timers later (fewer checks), unless it holds a beat back 250 ms: a
  // stall, checked every 100 ms while it lasts.
  assert.ok(checks >= 1, 'checked');
  if (stalls.length === 0) assert.ok(checks <= 13, `${checks} checks in 2 s`);
});
