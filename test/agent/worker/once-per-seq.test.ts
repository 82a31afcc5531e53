// The agent worker gets each command twice (its own connection and the main thread's
// forward, in either order) and must act on it once, in the CLI's order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { oncePerSeq } from '../../../src/agent/worker/worker-data.js';
import type { ControlMessage } from '../../../src/agent/protocol.js';

const cmd = (c: 'profile-start' | 'profile-stop' | 'flush', seq?: number): ControlMessage => ({
  v: 1,
  type: 'control',
  cmd: c,
  ...(seq === undefined ? {} : { seq }),
});

test('each seq is acted on once, whichever copy comes first; older commands are dropped', () => {
  const seen: string[] = [];
  const on = oncePerSeq((m) => seen.push(`${m.cmd}#${m.seq}`));
  on(cmd('profile-start', 3)); // forwarded copy first
  on(cmd('profile-start', 3)); // own connection
  on(cmd('profile-stop', 4));
  on(cmd('profile-start', 3)); // a late copy of an older command
  on(cmd('flush', 5));
  on(cmd('flush', 5));
  assert.deepEqual(seen, ['profile-start#3', 'profile-stop#4', 'flush#5']);
});

test('commands without seq (sent by something other than the CLI broadcast) are always acted on', () => {
  let n = 0;
  const on = oncePerSeq(() => n++);
  on(cmd('flush'));
  on(cmd('flush'));
  assert.equal(n, 2);
});
