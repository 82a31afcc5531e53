// The summary `hotpath run` prints: a run in which no request got a response shows neither a
// "healthy" finding nor latency figures of 0 ms that measured nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildReport } from '../../src/report/build-report.js';
import { formatRunSummary } from '../../src/run/run-summary.js';
import { styler } from '../../src/cli/io.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';

test('a run that measured nothing: the load line says so, no healthy finding, no 0 ms latency', () => {
  const run = syntheticRun({ seed: 3, rps: 0, elu: 0.8, cores: 0.8 });
  const load = run.load!;
  load.requests = { ...load.requests, total: 0, sent: 16_862, perSecond: 0 };
  load.errors = { total: 16_859, timeouts: 0, byCode: { EOF: 16_859 }, parse: 0 };
  load.statusCodes = {};
  const text = formatRunSummary(buildReport(run), '/srv/app', styler({ color: false }));
  assert.match(text, /load {6}no request got a response in 10\.0 s \(50 connections\), 16,859 errors/);
  assert.doesNotMatch(text, /healthy|No performance problem found/);
  assert.doesNotMatch(text, /p50 0\.00 ms/);
});

test('a run with responses keeps its figures', () => {
  const text = formatRunSummary(buildReport(syntheticRun({ seed: 3, elu: 0.5, cores: 0.5 })), '/srv/app', styler({ color: false }));
  assert.match(text, /load {6}[\d,]+ req\/s over 10\.0 s \(50 connections\): p50 [\d.]+ ms/);
  assert.match(text, /✔ healthy/);
});
