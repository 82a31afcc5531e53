// The adaptive call-count window in a real process: the agent worker says when the window opened
// (`call-window`), and `call-count-read` has it read at once rather than at its latest end.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentMessage, CallWindowMessage } from '../../../src/agent/protocol.js';
import { Collector, launch, getMany, destroyKeepAlive } from '../helpers/agent-harness.js';
import { callCountsFileName } from '../../../src/agent/profiling/script-capture.js';

after(() => destroyKeepAlive());

test('call-count window: opened and said so, read when told, long before its latest end', async () => {
  const c = new Collector();
  await c.start();
  const t = launch(c, ['server.cjs'], { config: { intervalMs: 100 } });
  try {
    const listen = await c.waitForListen();
    await c.waitFor((m) => m.type === 'sample' && m.pid === listen.pid, 5000, 'first sample');
    const from = Date.now() + 200;
    const latest = from + 60_000;
    c.send({ cmd: 'profile-start', seq: 1, callCountFrom: from, callCountUntil: latest });
    const opened = (await c.waitFor(
      (m: AgentMessage): m is CallWindowMessage => m.type === 'call-window' && m.pid === listen.pid,
      10_000,
      'call-window',
    )) as CallWindowMessage;
    assert.ok(opened.start >= from, `opened ${opened.start - from} ms after the planned opening`);
    await getMany(listen.port!, '/', 40);
    const told = Date.now();
    c.send({ cmd: 'call-count-read', seq: 2 });
    await new Promise((r) => setTimeout(r, 300));
    c.send({ cmd: 'flush', seq: 3 });
    await c.waitFor((m) => m.type === 'bye' && m.pid === listen.pid, 10_000, 'bye');
    const file = join(c.dir, callCountsFileName(listen.pid, 0));
    assert.ok(existsSync(file), 'the counts were written');
    const counts = JSON.parse(readFileSync(file, 'utf8')) as { start: number; end: number; scripts: Record<string, unknown[]> };
    assert.equal(counts.start, opened.start);
    assert.ok(counts.end >= told && counts.end < told + 5000, `read ${counts.end - told} ms after it was told`);
    assert.ok(
      Object.keys(counts.scripts).some((u) => u.endsWith('/server.cjs')),
      Object.keys(counts.scripts).join(', '),
    );
  } finally {
    t.kill();
    await t.exited;
    await c.close();
  }
});
