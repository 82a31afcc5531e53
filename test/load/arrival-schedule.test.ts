import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ArrivalSchedule } from '../../src/load/arrival-schedule.js';

test('sends are planned at fixed intervals from the start, shifted by the worker offset', () => {
  const s = new ArrivalSchedule(10, 5); // 100 req/s, this worker 5 ms after the first
  s.start(1000);
  assert.equal(s.dueAt(0), 1005);
  assert.equal(s.dueAt(3), 1035);
});

test('planned, made and never-made sends are counted from the plan, not from what was sent', () => {
  const s = new ArrivalSchedule(10, 0);
  s.start(0);
  s.next = 40; // 40 sends made
  // window [100, 500): sends 10..49 planned in it; 40..49 due before the end and never made
  assert.deepEqual(s.totals(100, 500), { intended: 40, dropped: 10 });
  s.next = 50;
  assert.deepEqual(s.totals(100, 500), { intended: 40, dropped: 0 });
});

test('with an amount the plan ends after exactly that many sends', () => {
  const s = new ArrivalSchedule(1, 0);
  s.start(0);
  s.next = 7;
  s.allow(3);
  assert.equal(s.limit, 10);
  assert.equal(s.exhausted, false);
  s.next = 10;
  assert.equal(s.exhausted, true);
  assert.deepEqual(s.totals(0, 1_000_000), { intended: 10, dropped: 0 });
});
