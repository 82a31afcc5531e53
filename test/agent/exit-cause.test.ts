// Issue 18: what ended a process, as its agent says it in its last `bye` (agent/exit-cause.ts):
// the app frames that called process.exit(), the uncaught error with Node's origin for it, and
// nothing of either when the event loop ran out. Real processes, the agent preloaded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ByeMessage } from '../../src/agent/protocol.js';
import { agentLauncher, get, launch, within, Collector } from './helpers/agent-harness.js';

const startWith = agentLauncher();

async function crashWith(how: 'throw' | 'exit' | 'reject'): Promise<{ bye: ByeMessage; exit: { code: number | null } }> {
  const { c, t, port } = await startWith(['crash.cjs']);
  get(port, `/crash?how=${how}`, false).catch(() => {
    /* the server died, as asked */
  });
  const exit = await within(t.exited, 15_000, 'the crash');
  const bye = (await c.waitFor((m) => m.type === 'bye' && m.reason === 'exit', 5000, 'bye on exit')) as ByeMessage;
  return { bye, exit };
}

test('process.exit(3) in a handler: the bye names the app frame that called it', async () => {
  const { bye, exit } = await crashWith('exit');
  assert.equal(exit.code, 3);
  assert.equal(bye.code, 3);
  const site = bye.cause?.exitCall?.[0];
  assert.ok(site, JSON.stringify(bye));
  assert.match(site.file, /crash\.cjs$/);
  assert.equal(bye.cause?.uncaught, undefined);
});

test("an uncaught exception: the bye carries its error and stack, with Node's origin, and no caller of process.exit()", async () => {
  const { bye, exit } = await crashWith('throw');
  assert.equal(exit.code, 1);
  assert.equal(bye.cause?.uncaught?.origin, 'uncaughtException');
  assert.equal(bye.cause?.uncaught?.stack[0], 'Error: crash fixture: uncaught');
  assert.match(bye.cause?.uncaught?.stack[1] ?? '', /crash\.cjs:\d+:\d+\)$/);
  assert.equal(bye.cause?.exitCall, undefined, 'Node ended the process, no JS frame called exit');
});

test('an unhandled rejection reads as one (origin unhandledRejection)', async () => {
  const { bye, exit } = await crashWith('reject');
  assert.equal(exit.code, 1);
  assert.equal(bye.cause?.uncaught?.origin, 'unhandledRejection');
  assert.equal(bye.cause?.uncaught?.stack[0], 'Error: crash fixture: rejected');
});

test('an app whose event loop runs out says bye with no cause', async () => {
  const c = new Collector();
  await c.start();
  const t = launch(c, ['prints.cjs']);
  await within(t.exited, 15_000, 'exit');
  const bye = (await c.waitFor((m) => m.type === 'bye', 5000, 'bye on exit')) as ByeMessage;
  await c.close();
  assert.equal(bye.reason, 'exit');
  assert.equal(bye.cause, undefined, JSON.stringify(bye.cause));
});
