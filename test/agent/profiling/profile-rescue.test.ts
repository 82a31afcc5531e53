// A target that dies mid-profile (uncaught exception, process.exit()) keeps its profile: the
// agent's 'exit' handler has the agent worker stop and write it, waiting on Atomics.wait while
// the main isolate still answers the worker's inspector session. Runs on every installed major,
// since it leans on V8 serving inspector interrupts during Atomics.wait.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentMessage, ProfileMessage, StallMessage } from '../../../src/agent/protocol.js';
import { PROFILE_RESCUE_WAIT_MS } from '../../../src/agent/profiling/profile-rescue.js';
import { Collector, launch, within, get, getMany, destroyKeepAlive, NODES, type Target } from '../helpers/agent-harness.js';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
  destroyKeepAlive();
});

async function start(node: string, config: Record<string, unknown> = {}): Promise<{ c: Collector; t: Target; port: number; pid: number }> {
  const c = new Collector();
  await c.start();
  const t = launch(c, ['crash.cjs'], { node, config });
  cleanups.push(async () => {
    t.kill();
    await t.exited;
    await c.close();
  });
  const listen = await c.waitForListen();
  await c.waitFor((m) => m.type === 'sample', 5000, 'first sample');
  return { c, t, port: listen.port as number, pid: listen.pid };
}

/** Asks for a crash, after blocking the loop for `blockMs` of CPU first; the request itself fails with the process. */
function crash(port: number, how: 'throw' | 'exit', blockMs?: number): void {
  get(port, `/crash?how=${how}${blockMs === undefined ? '' : `&blockMs=${blockMs}`}`, false).catch(() => {
    /* the server died, as asked */
  });
}

/** From profile-start to the mid-load switch, ms (the CLI's is the load's middle, seconds away). */
const SWITCH_AFTER_MS = 1500;

const isProfile = (m: AgentMessage): m is ProfileMessage => m.type === 'profile';

/** Milliseconds between the crash and the app's own 'exit' listener, as the fixture printed it. */
function exitDelay(t: Target): number {
  const m = /(\d+) ms after the crash/.exec(t.stdout());
  assert.ok(m, `the app's own exit handler ran: ${t.stdout()}`);
  return Number(m[1]);
}

for (const node of NODES) {
  for (const how of ['throw', 'exit'] as const) {
    test(`${node.name}: ${how === 'throw' ? 'an uncaught exception' : 'process.exit()'} mid-profile keeps the CPU profile`, async () => {
      const { c, t, port, pid } = await start(node.bin);
      c.send({ cmd: 'profile-start', seq: 1 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await getMany(port, '/block?ms=20', 20);
      const worked = Date.now();
      crash(port, how);
      const exit = await within(t.exited, 10_000, 'the crash');
      assert.deepEqual(exit, { code: how === 'exit' ? 3 : 1, signal: null });
      const profile = await c.waitFor(isProfile, 3000, 'the rescued profile');
      assert.equal(profile.kind, 'cpu');
      assert.equal(profile.pid, pid);
      // The rescued profile runs up to the crash: it covers the end of the blocks. Not judged by its
      // sample count: a starved sampler thread takes far fewer samples than one per interval (36-69
      // for the 400 ms of blocks on Node 22/24 at load 10, several hundred on a calm machine).
      const data = JSON.parse(readFileSync(join(c.dir, profile.file), 'utf8')) as {
        nodes: { callFrame: { functionName: string } }[];
        samples: number[];
      };
      assert.ok(data.samples.length > 0, 'samples were written');
      assert.equal(data.samples.length, profile.samples);
      assert.ok(
        profile.start < worked && profile.end >= worked,
        `the profile (${profile.start - worked} .. +${profile.end - worked} ms from the end of the blocks, ${profile.samples} samples) covers the work up to the crash`,
      );
      assert.ok(
        data.nodes.some((n) => n.callFrame.functionName === 'blockFor'),
        'the work before the crash is in it',
      );
      // The profile went out before the main thread's bye (the CLI may stop reading after bye).
      const byeAt = c.messages.findIndex((m) => m.type === 'bye' && m.pid === pid);
      assert.ok(byeAt > c.messages.indexOf(profile), 'profile, then bye');
      assert.ok(exitDelay(t) < PROFILE_RESCUE_WAIT_MS, 'well within the bound');
      assert.doesNotMatch(t.stderr(), /Waiting for the debugger/);
      assert.match(t.stderr(), how === 'throw' ? /crash fixture: uncaught/ : /^$/);
    });
  }
}

test('with --heap both the CPU and the allocation profile are kept', async () => {
  const { c, t, port } = await start(process.execPath, { heap: true });
  c.send({ cmd: 'profile-start', seq: 1 });
  await getMany(port, '/block?ms=20', 10);
  crash(port, 'throw');
  await within(t.exited, 10_000, 'the crash');
  await c.waitFor((m) => m.type === 'bye', 3000, 'bye');
  const kinds = c.messages
    .filter(isProfile)
    .map((p) => p.kind)
    .sort();
  assert.deepEqual(kinds, ['cpu', 'heap']);
  for (const p of c.messages.filter(isProfile)) assert.ok(existsSync(join(c.dir, p.file)));
});

test('a crash after the mid-load heap switch keeps the CPU and allocation profiles, drops the retained one and leaves stderr clean', async () => {
  const { c, t, port } = await start(process.execPath, { heap: true });
  // The switch comes well after the worker starts the profile: a start that arrives after it
  // begins with the retained view and writes no allocation profile (a worker kept off the cores
  // beside a spinner per core at load 15 started it 26-240 ms after a switch due 200 ms on).
  c.send({ cmd: 'profile-start', seq: 1, heapRetainedFrom: Date.now() + SWITCH_AFTER_MS });
  await getMany(port, '/block?ms=20', 20);
  await c.waitFor((m) => isProfile(m) && m.kind === 'heap', 10_000, 'the switch');
  crash(port, 'throw');
  await within(t.exited, 10_000, 'the crash');
  await c.waitFor((m) => m.type === 'bye', 3000, 'bye');
  const kinds = c.messages
    .filter(isProfile)
    .map((p) => p.kind)
    .sort();
  assert.deepEqual(kinds, ['cpu', 'heap'], 'the retained view needs the post-load GC: none at a crash');
  assert.doesNotMatch(t.stderr(), /Waiting for the debugger/);
});

for (const node of NODES) {
  test(`${node.name}: a crash right after a long block ends the stall with its cause and leaves stderr clean`, async () => {
    const { c, t, port, pid } = await start(node.bin);
    // A block of 700 ms of CPU, not of wall time (crash.cjs): at load 15 a 700 ms wall-clock block
    // ran 4 ms of CPU in the watchdog's first 96 ms (4 %), which is what a preempted thread looks
    // like, and the watchdog rightly did not sample it (no cause).
    crash(port, 'throw', 700);
    assert.deepEqual(await within(t.exited, 10_000, 'the crash'), { code: 1, signal: null });
    await c.waitFor((m) => m.type === 'bye' && m.pid === pid, 3000, 'bye');
    const final = c.messages.find((m): m is StallMessage => m.type === 'stall' && !m.ongoing);
    assert.ok(final, `a final stall: ${c.messages.map((m) => m.type).join(',')}`);
    assert.ok(final.durationMs >= 600, `duration ${final.durationMs}`);
    // The block's code (blockFor, or the handler V8 inlined it into) is the cause.
    assert.ok(
      final.cause?.some((x) => x.share > 0.5 && x.stack[0]?.file.endsWith('/crash.cjs')),
      `the final stall's cause: ${JSON.stringify(final)}`,
    );
    assert.ok(exitDelay(t) < PROFILE_RESCUE_WAIT_MS, 'well within the bound');
    assert.doesNotMatch(t.stderr(), /Waiting for the debugger/);
  });
}

test('no profile running: nothing is waited for and nothing is written', async () => {
  const { c, t, port } = await start(process.execPath);
  c.send({ cmd: 'profile-start', seq: 1 });
  await getMany(port, '/block?ms=5', 5);
  c.send({ cmd: 'profile-stop', seq: 2 });
  await c.waitFor(isProfile, 5000, 'the profile of the window');
  crash(port, 'exit');
  assert.deepEqual(await within(t.exited, 10_000, 'the crash'), { code: 3, signal: null });
  await c.waitFor((m) => m.type === 'bye', 3000, 'bye');
  assert.equal(c.messages.filter(isProfile).length, 1, 'only the window profile');
  assert.ok(exitDelay(t) < 500, `exit delayed ${exitDelay(t)} ms`);
});
