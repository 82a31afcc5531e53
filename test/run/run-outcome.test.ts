// How a run ended: the phase it ended in, exit versus crash, never-listened versus failed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hotpathError } from '../../src/errors.js';
import { endedOutcome, failureOutcome, interruptedOutcome, refusedWhileRunning } from '../../src/run/run-outcome.js';

const phases = [
  { phase: 'starting' as const, start: 0, end: 100 },
  { phase: 'load' as const, start: 100, end: 1100 },
  { phase: 'cooldown' as const, start: 1100, end: 1150 },
  { phase: 'stopping' as const, start: 1150 },
];

test('a crash names the phase it happened in, its exit, and when (issue 18: how far into the load)', () => {
  const o = endedOutcome({ code: 1, signal: null, at: 600 }, phases, ['Error: boom']);
  assert.deepEqual(o, {
    status: 'target-crashed',
    reason: 'The target exited with code 1 during the load phase',
    stderrTail: ['Error: boom'],
    at: 600,
  });
  assert.equal(
    endedOutcome({ code: null, signal: 'SIGSEGV', at: 50 }, phases).reason,
    'The target was killed by SIGSEGV during the starting phase',
  );
  assert.equal(endedOutcome({ code: 0, signal: null, at: 700 }, phases).status, 'target-exited');
});

test("a served process hotpath did not spawn (a watcher's child) is named, and an unknown exit says so", () => {
  const who = 'pid 42, `node server.js`, a child of the command hotpath started, which ran on';
  const o = endedOutcome({ code: null, signal: null, at: 600 }, phases, [], who);
  assert.equal(o.status, 'target-crashed');
  assert.equal(
    o.reason,
    `The target (${who}) ended without an exit code (killed by a signal, or its agent could not say) during the load phase`,
  );
  assert.equal(endedOutcome({ code: 0, signal: null, at: 600 }, phases, [], who).status, 'target-exited');
});

test("an interruption names the last phase of the run, not hotpath's own cleanup", () => {
  assert.equal(interruptedOutcome(phases).reason, 'Interrupted (Ctrl-C) during the load phase');
  assert.equal(interruptedOutcome([]).reason, 'Interrupted (Ctrl-C) during the starting phase');
});

test('listen errors are never-listened; other errors are failed, with their code and first line', () => {
  const timeout = failureOutcome(hotpathError('HOTPATH_ERR_READY_TIMEOUT', 'no listen\nlast output'), ['x']);
  assert.deepEqual(timeout, { status: 'never-listened', reason: 'no listen', code: 'HOTPATH_ERR_READY_TIMEOUT', stderrTail: ['x'] });
  assert.equal(failureOutcome(hotpathError('HOTPATH_ERR_CONNECT', 'refused')).status, 'failed');
  assert.equal(failureOutcome(new Error('bug')).code, undefined);
});

test('issue 18: a refused connection while the target that listened still runs says it closed its server; other errors pass', () => {
  const refused = hotpathError(
    'HOTPATH_ERR_CONNECT',
    'Cannot connect to 127.0.0.1:3000 (ECONNREFUSED): is the server running and listening there?',
  );
  const said = refusedWhileRunning(refused, 42, '127.0.0.1:3000') as Error & { code: string };
  assert.equal(said.code, 'HOTPATH_ERR_CONNECT');
  assert.match(
    said.message,
    /^pid 42 listened on 127\.0\.0\.1:3000 and still runs, yet refuses connections there \(ECONNREFUSED\): it closed its server/,
  );
  const other = hotpathError('HOTPATH_ERR_TLS', 'TLS failed');
  assert.equal(refusedWhileRunning(other, 42, 'x'), other);
});
