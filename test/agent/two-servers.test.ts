// An app with two HTTP servers in one process (its config service runs in-process): once the CLI
// names the driven server (control `target`), only that server's requests are in the `http`
// figures and the other's are counted apart (`httpOther`); without it, both are counted, as
// agents always did.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentMessage, ListenMessage, SampleMessage } from '../../src/agent/protocol.js';
import { Collector, launch, getMany, destroyKeepAlive } from './helpers/agent-harness.js';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
  destroyKeepAlive();
});

const isSample = (m: AgentMessage): m is SampleMessage => m.type === 'sample';
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

async function start(): Promise<{ c: Collector; main: ListenMessage; config: ListenMessage }> {
  const c = new Collector();
  await c.start();
  const t = launch(c, ['two-servers.cjs'], { config: { intervalMs: 50 } });
  cleanups.push(async () => {
    t.kill();
    await t.exited;
    await c.close();
  });
  await c.waitFor(() => c.of('listen').length >= 2, 10_000, 'two listens');
  const [main, config] = c.of('listen');
  // The start-up call to the config service was served (and counted: no target named yet).
  await c.waitFor((m) => isSample(m) && m.http !== undefined, 10_000, 'the start-up call');
  return { c, main, config };
}

function totals(samples: SampleMessage[]): { finished: number; other: number; drivenOnly: number } {
  return {
    finished: sum(samples.map((s) => s.http?.finished ?? 0)),
    other: sum(samples.map((s) => s.httpOther ?? 0)),
    drivenOnly: samples.filter((s) => s.http?.drivenOnly === true).length,
  };
}

test("the driven server named: only its requests are in the http figures, the config service's are counted apart", async () => {
  const { c, main, config } = await start();
  assert.notEqual(main.port, config.port);
  c.send({ cmd: 'target', port: main.port });
  await c.waitFor((m) => isSample(m) && m.http?.drivenOnly === true, 5000, 'a sample of the driven server alone');
  const from = c.messages.length;
  const after = () => c.messages.slice(from).filter(isSample);
  const statuses = await getMany(main.port!, '/', 60);
  assert.deepEqual(new Set(statuses), new Set([200]));
  await c.waitFor(() => totals(after()).finished >= 60 && totals(after()).other >= 60, 10_000, '60 requests on each server');
  await new Promise((r) => setTimeout(r, 150));
  const t = totals(after());
  assert.equal(t.finished, 60, 'each request the load sent, once');
  assert.equal(t.other, 60, 'each call to the config service, apart');
  assert.ok(
    after()
      .filter((s) => s.http !== undefined)
      .every((s) => s.http!.drivenOnly === true),
  );
});

test('no driven server named (an older CLI): every server of the thread is counted, as before', async () => {
  const { c, main } = await start();
  const from = c.messages.length;
  const after = () => c.messages.slice(from).filter(isSample);
  await getMany(main.port!, '/', 40);
  await c.waitFor(() => totals(after()).finished >= 80, 10_000, '80 requests in all');
  await new Promise((r) => setTimeout(r, 150));
  const t = totals(after());
  assert.deepEqual(t, { finished: 80, other: 0, drivenOnly: 0 });
});
