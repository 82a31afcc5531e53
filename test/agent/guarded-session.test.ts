// A post on an inspector session that is no longer connected throws in node; the agent's sessions
// fail it through the callback instead, so no timer or callback of the agent throws uncaught.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Session } from 'node:inspector';
import { guardPosts } from '../../src/agent/profiling/guarded-session.js';

test('a plain session throws on a post after disconnect (what the guard is for)', () => {
  const s = new Session();
  s.connect();
  s.disconnect();
  assert.throws(() => s.post('Profiler.enable', () => {}), /not connected/i);
});

test('a guarded session answers a post after disconnect with an error through its callback, and never throws', async () => {
  const s = guardPosts(new Session());
  s.connect();
  const ok = await new Promise<Error | null>((resolve) => s.post('Runtime.evaluate', { expression: '1 + 1' }, (err) => resolve(err)));
  assert.equal(ok, null, 'a connected session works as before');
  s.disconnect();
  const err = await new Promise<Error | null>((resolve) => s.post('Profiler.enable', (e) => resolve(e)));
  assert.ok(err instanceof Error);
  assert.match(err.message, /not connected/i);
  const withParams = await new Promise<Error | null>((resolve) =>
    s.post('Profiler.setSamplingInterval', { interval: 1000 }, (e) => resolve(e)),
  );
  assert.ok(withParams instanceof Error, 'the callback after params gets it too');
  assert.doesNotThrow(() => s.post('Profiler.start'), 'a post without a callback is dropped');
});
