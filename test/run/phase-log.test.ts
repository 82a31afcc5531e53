// PhaseLog: phases in order, each closed by the next, every change announced once.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunPhase } from '../../src/agent/protocol.js';
import { PhaseLog } from '../../src/run/phase-log.js';

test('entering a phase closes the previous one and is announced once', () => {
  const told: RunPhase[] = [];
  const log = new PhaseLog((p) => told.push(p));
  log.enter('starting', 100);
  log.enter('load', 250);
  log.enter('load', 260);
  assert.equal(log.current, 'load');
  log.close(1250);
  assert.equal(log.current, undefined);
  log.enter('stopping', 1200);
  assert.deepEqual(log.phases, [
    { phase: 'starting', start: 100, end: 250 },
    { phase: 'load', start: 250, end: 1250 },
    { phase: 'stopping', start: 1200 },
  ]);
  assert.deepEqual(told, ['starting', 'load', 'stopping']);
  assert.deepEqual(log.get('load'), { phase: 'load', start: 250, end: 1250 });
});

test('an end never precedes its start', () => {
  const log = new PhaseLog();
  log.enter('load', 500);
  log.close(400);
  assert.equal(log.phases[0].end, 500);
});
