// The throw watch in a real process: once told (`watch-throws`), the agent worker follows the
// main thread's exceptions, says so (`throw-watch`), and writes where each was thrown and the
// catch that took it at the flush; the app's answers are unchanged.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentMessage, ThrowWatchMessage } from '../../../src/agent/protocol.js';
import { Collector, launch, getMany, destroyKeepAlive } from '../helpers/agent-harness.js';
import { throwsFileName, type ThrowWindow } from '../../../src/agent/profiling/throw-watch.js';

after(() => destroyKeepAlive());

test('throw watch: each exception is noted with the catch that took it, and the requests are answered as before', async () => {
  const c = new Collector();
  await c.start();
  const t = launch(c, ['catch-server.cjs'], { config: { intervalMs: 100 } });
  try {
    const listen = await c.waitForListen();
    await c.waitFor((m) => m.type === 'sample' && m.pid === listen.pid, 5000, 'first sample');
    // Before the watch: nothing followed.
    assert.deepEqual([...new Set(await getMany(listen.port!, '/', 10))].sort(), [200, 500]);
    c.send({ cmd: 'watch-throws', seq: 1 });
    await c.waitFor((m: AgentMessage): m is ThrowWatchMessage => m.type === 'throw-watch' && m.pid === listen.pid, 10_000, 'throw-watch');
    const statuses = await getMany(listen.port!, '/', 50);
    assert.equal(statuses.filter((s) => s === 500).length, 10, 'one request in five answered 500, as without the watch');
    assert.equal(statuses.filter((s) => s === 200).length, 40);
    c.send({ cmd: 'flush', seq: 2 });
    await c.waitFor((m) => m.type === 'bye' && m.pid === listen.pid, 10_000, 'bye');
    const file = join(c.dir, throwsFileName(listen.pid, 0));
    assert.ok(existsSync(file), 'the throws were written');
    const w = JSON.parse(readFileSync(file, 'utf8')) as ThrowWindow;
    assert.equal(w.followed, 10);
    const total = w.groups.reduce((a, g) => a + g.count, 0);
    assert.equal(total, 10);
    for (const g of w.groups) {
      assert.equal(g.uncaught, false);
      assert.equal(g.frames[0].function, 'render');
      assert.match(g.frames[0].file, /catch-server\.cjs$/);
      assert.equal(g.frames[0].line, 7);
      // The step from the throw stops at the first statement of handle's catch.
      assert.equal(g.handledAt?.function, 'handle');
      assert.equal(g.handledAt?.line, 15);
    }
  } finally {
    t.kill();
    await t.exited;
    await c.close();
  }
});
