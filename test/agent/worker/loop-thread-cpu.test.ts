// The main thread's own CPU in every sample on every installed Node major: node's figure
// (`threadUser`/`threadSystem`) where it has process.threadCpuUsage, else the agent worker's /proc
// reading (`threadOnCpu`, Linux). Judged by shares of the process's CPU, which a busy machine
// keeps: the same key derivation on the thread pool leaves the main thread a small share, on the
// loop most of it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentMessage, SampleMessage } from '../../../src/agent/protocol.js';
import { Collector, launch, getMany, destroyKeepAlive, NODES } from '../helpers/agent-harness.js';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
  destroyKeepAlive();
});

const isSample = (m: AgentMessage): m is SampleMessage => m.type === 'sample';
const threadUs = (s: SampleMessage): number | undefined =>
  s.cpu.threadUser !== undefined ? s.cpu.threadUser + (s.cpu.threadSystem ?? 0) : s.cpu.threadOnCpu;
/** The agent worker refreshes the reading every 200 ms: the samples of a phase run on this long past its end. */
const LAG_MS = 400;

async function phase(c: Collector, pid: number, port: number, path: string): Promise<{ thread: number; process: number }> {
  const start = Date.now();
  const deadline = start + 1500;
  while (Date.now() < deadline) await getMany(port, path, 8, 4);
  const end = Date.now();
  await new Promise((r) => setTimeout(r, LAG_MS));
  const samples = c.messages.filter(isSample).filter((s) => s.pid === pid && s.t - s.intervalMs >= start - 50 && s.t <= end + LAG_MS);
  const thread = samples.reduce((a, s) => a + (threadUs(s) ?? NaN), 0);
  const process = samples.reduce((a, s) => a + s.cpu.user + s.cpu.system, 0);
  return { thread, process };
}

for (const node of NODES) {
  test(`main thread's CPU on ${node.name}: node's figure or the /proc reading, a small share with the work on the pool, most of it on the loop`, async () => {
    const c = new Collector();
    await c.start();
    const t = launch(c, ['pool-or-loop.cjs'], { config: { intervalMs: 100 }, node: node.bin });
    cleanups.push(async () => {
      t.kill();
      await t.exited;
      await c.close();
    });
    const listen = await c.waitForListen();
    // The agent worker's first reading comes once it has started (a run's load starts later still).
    await c.waitFor((m) => isSample(m) && m.pid === listen.pid && threadUs(m) !== undefined, 10_000, "the thread's CPU");
    const pool = await phase(c, listen.pid, listen.port!, '/pool');
    const loop = await phase(c, listen.pid, listen.port!, '/loop');
    const samples = c.messages.filter(isSample).filter((s) => s.pid === listen.pid);
    const nodeMeasures = samples.some((s) => s.cpu.threadUser !== undefined);
    if (nodeMeasures)
      assert.ok(
        samples.every((s) => s.cpu.threadOnCpu === undefined),
        'no /proc reading where node measures',
      );
    else {
      assert.ok(
        samples.filter((s) => s.t > samples[0].t + 500).every((s) => s.cpu.threadOnCpu !== undefined && s.cpu.threadUser === undefined),
        'the /proc reading once the agent worker runs',
      );
    }
    assert.ok(Number.isFinite(pool.thread) && Number.isFinite(loop.thread), 'every sample of the phases measures the thread');
    assert.ok(pool.thread < 0.35 * pool.process, `pool: thread ${pool.thread} of ${pool.process} µs`);
    assert.ok(loop.thread > 0.7 * loop.process, `loop: thread ${loop.thread} of ${loop.process} µs`);
    c.send({ cmd: 'flush' });
    await c.waitFor((m) => m.type === 'bye' && m.pid === listen.pid, 5000, 'bye');
  });
}
