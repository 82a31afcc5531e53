// event-loop-stuck: a target thread's loop that stopped and never came back before the run
// ended (only `ongoing` stall reports, the last at the end of the run) is a critical finding
// naming the app function on the blocking stack; a stall that ended, or that is the agent's,
// is not.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StallMessage } from '../../src/agent/protocol.js';
import { eventLoopStuck } from '../../src/analyze/event-loop-stuck.js';
import { analyzeRun } from '../../src/analyze/analyze-run.js';
import type { RunData } from '../../src/run-dir/run-data.js';
import { syntheticRun, SYNTHETIC_START } from '../fixtures/telemetry/synthetic-run.js';

const cwd = '/srv/app';
const warm = { function: 'warmCache', file: 'file:///srv/app/cache.js', line: 6, column: 1 };
const timers = { function: 'listOnTimeout', file: 'node:internal/timers', line: 524, column: 17 };
const cause: StallMessage['cause'] = [{ share: 0.97, stack: [warm, timers], line: 8 }];

/** A 10 s run whose loop blocked 50 ms after listening (1 s before the load) and never came back. */
function stuckRun(o: { final?: boolean; lastAtMs?: number; byAgent?: boolean; cause?: StallMessage['cause'] } = {}): RunData {
  const run = syntheticRun({ cwd, rps: 0, elu: 1, cores: 1 });
  const start = SYNTHETIC_START - 950;
  const lastAt = o.lastAtMs ?? 10_200;
  const reports: StallMessage[] = [];
  for (let t = 300; t < lastAt; t += 500) {
    reports.push({
      v: 1,
      pid: 4242,
      threadId: 0,
      t: SYNTHETIC_START + t,
      type: 'stall',
      start,
      durationMs: SYNTHETIC_START + t - start,
      ongoing: true,
    });
  }
  const last: StallMessage = {
    v: 1,
    pid: 4242,
    threadId: 0,
    t: SYNTHETIC_START + lastAt,
    type: 'stall',
    start,
    durationMs: SYNTHETIC_START + lastAt - start,
    ongoing: !o.final,
    ...(o.cause !== undefined ? { cause: o.cause } : {}),
    ...(o.byAgent ? { byAgent: 'profile-stop' as const } : {}),
  };
  run.threads[0].stalls = [...reports, last];
  return run;
}

test('a loop that never came back: critical, with the app function on the blocking stack and the stack itself', () => {
  const [f, ...rest] = eventLoopStuck(stuckRun({ cause }));
  assert.equal(rest.length, 0);
  assert.equal(f.code, 'HOTPATH_EVENT_LOOP_STUCK');
  assert.equal(f.category, 'event-loop-blocking');
  assert.equal(f.severity, 'critical');
  assert.deepEqual(f.culprit, { function: 'warmCache', file: 'cache.js', line: 6, column: 1 });
  assert.match(f.title, /never came back: warmCache/);
  assert.match(f.summary, /0\.9 s before the load began, right after it started listening/);
  assert.match(f.summary, /warmCache \(cache\.js:6\), busy at line 8, called from listOnTimeout node:internal\/timers:524/);
  assert.deepEqual(f.evidence.stack, ['warmCache cache.js:6', 'listOnTimeout node:internal/timers:524']);
  assert.equal(f.evidence.hotLine, 'cache.js:8');
  assert.equal(f.evidence.loopReturned, false);
  assert.ok((f.evidence.stalledMs as number) >= 11_000);
});

test('it leads the diagnosis of a run in which nothing was answered', () => {
  const findings = analyzeRun(stuckRun({ cause }));
  assert.equal(findings[0]?.code, 'HOTPATH_EVENT_LOOP_STUCK', findings.map((x) => x.code).join());
  assert.ok(!findings.some((x) => x.category === 'healthy'));
});

test('without sampled stacks: still critical, saying the stack could not be sampled', () => {
  const [f] = eventLoopStuck(stuckRun());
  assert.equal(f.severity, 'critical');
  assert.equal(f.culprit, undefined);
  assert.match(f.summary, /could not be sampled/);
});

test('only node code on the stack: no app culprit is invented', () => {
  const [f] = eventLoopStuck(stuckRun({ cause: [{ share: 1, stack: [timers] }] }));
  assert.equal(f.culprit, undefined);
  assert.match(f.summary, /No app code was on the blocking stack: listOnTimeout/);
});

test('a stall that ended (its final report came), one the agent caused, or one whose reports stopped long before the end: nothing', () => {
  assert.deepEqual(eventLoopStuck(stuckRun({ cause, final: true })), []);
  assert.deepEqual(eventLoopStuck(stuckRun({ cause, byAgent: true })), []);
  assert.deepEqual(eventLoopStuck(stuckRun({ cause, lastAtMs: 5000 })), []);
  assert.deepEqual(eventLoopStuck(syntheticRun({ cwd, stalls: [{ atProgress: 0.5, durationMs: 3000, cause }] })), []);
});
