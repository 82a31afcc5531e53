// Test helper: a real CPU and heap profile captured from a small script run under the
// inspector (in a child process), wrapped in a synthetic run (telemetry, load, phases) and
// a hand-written diagnosis whose culprit points into the profiled script. Optionally the
// profile's function names and the diagnosis carry hostile strings (markup, handlers).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunData } from '../../../src/run-dir/run-data.js';
import type { Report } from '../../../src/report/report-schema.js';
import type { Finding } from '../../../src/analyze/finding.js';
import { syntheticRun, SYNTHETIC_START } from '../../fixtures/telemetry/synthetic-run.js';

/** Profiled script: hashing in the first half, allocation and JSON in the second. */
export const WORK_SCRIPT = `'use strict';
const inspector = require('node:inspector');
const crypto = require('node:crypto');
const fs = require('node:fs');
const session = new inspector.Session();
session.connect();
const post = (method, params) => new Promise((resolve, reject) =>
  session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));

function hashWork(seed) {
  return crypto.createHash('sha256').update(seed + 'x'.repeat(2000)).digest('hex');
}
function buildObjects(n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push({ id: i, name: 'item' + i, tags: ['a', 'b'] });
  return out;
}
function parseWork(items) {
  return JSON.parse(JSON.stringify(items)).length;
}
function handleRequest(phase, i) {
  if (phase === 0) return hashWork(String(i)).length;
  return parseWork(buildObjects(200));
}

async function main() {
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 250 });
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  await post('Profiler.start');
  const start = Date.now();
  // The profile's clock is the monotonic one process.hrtime reads (µs).
  const nowUs = () => Number(process.hrtime.bigint() / 1000n);
  const hashUs = [nowUs()];
  for (const phase of [0, 1]) {
    const until = Date.now() + Number(process.env.PHASE_MS || 500);
    let i = 0;
    while (Date.now() < until) handleRequest(phase, i++);
    if (phase === 0) hashUs.push(nowUs());
  }
  const { profile } = await post('Profiler.stop');
  const end = Date.now();
  const heap = await post('HeapProfiler.stopSampling');
  fs.writeFileSync('cpu.cpuprofile', JSON.stringify(profile));
  fs.writeFileSync('heap.heapprofile', JSON.stringify(heap.profile));
  const hashPhase = { fromMs: (hashUs[0] - profile.startTime) / 1000, toMs: (hashUs[1] - profile.startTime) / 1000 };
  process.stdout.write(JSON.stringify({ start, end, hashPhase }));
}
main();
`;

/** 1-based line of handleRequest in WORK_SCRIPT (the finding's culprit). */
export const CULPRIT_LINE = WORK_SCRIPT.split('\n').findIndex((l) => l.startsWith('function handleRequest')) + 1;

export const HOSTILE_NAME = '<img src=x onerror="window.__xss=1">';
export const HOSTILE_SCRIPT = '<script>window.__xss=2</script>';

export interface Captured {
  dir: string;
  cpuPath: string;
  heapPath: string;
  /** Length of the profiled window, ms. */
  durationMs: number;
  /**
   * The hashing phase, ms after the profile's start: it begins when Profiler.start has answered,
   * 16-83 ms after the profile started at load 17, more on a busier machine.
   */
  hashPhase?: { fromMs: number; toMs: number };
}

/** Runs WORK_SCRIPT under the inspector and keeps its CPU and heap profiles. */
export function captureProfiles(phaseMs = 500): Captured {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-report-'));
  writeFileSync(join(dir, 'server.js'), WORK_SCRIPT);
  const out = execFileSync(process.execPath, ['server.js'], {
    cwd: dir,
    timeout: 30_000,
    env: { ...process.env, PHASE_MS: String(phaseMs) },
  });
  const { start, end, hashPhase } = JSON.parse(out.toString()) as { start: number; end: number; hashPhase: Captured['hashPhase'] };
  return { dir, cpuPath: join(dir, 'cpu.cpuprofile'), heapPath: join(dir, 'heap.heapprofile'), durationMs: end - start, hashPhase };
}

/** Renames functions in a captured profile (a copy): hostile names in a real profile's shape. */
export function renameFunctions(cap: Captured, names: Record<string, string>): Captured {
  const rename = (path: string, to: string): void => {
    let text = readFileSync(path, 'utf8');
    for (const [from, name] of Object.entries(names))
      text = text.replaceAll(`"functionName":"${from}"`, `"functionName":${JSON.stringify(name)}`);
    writeFileSync(to, text);
  };
  const cpuPath = join(cap.dir, 'hostile.cpuprofile');
  const heapPath = join(cap.dir, 'hostile.heapprofile');
  rename(cap.cpuPath, cpuPath);
  rename(cap.heapPath, heapPath);
  return { ...cap, cpuPath, heapPath };
}

export interface FixtureOptions {
  /** Put markup and handler attributes in the diagnosis texts too. */
  hostile?: boolean;
  heap?: boolean;
}

/** A synthetic 2 s run around the captured profiles, and a diagnosis pointing into server.js. */
export function fixtureRun(cap: Captured, o: FixtureOptions = {}): { run: RunData; report: Report } {
  const profiles: RunData['profiles'] = [
    { kind: 'cpu', pid: 4242, threadId: 0, path: cap.cpuPath, start: SYNTHETIC_START, end: SYNTHETIC_START + cap.durationMs },
  ];
  if (o.heap !== false)
    profiles.push({
      kind: 'heap',
      pid: 4242,
      threadId: 0,
      path: cap.heapPath,
      start: SYNTHETIC_START,
      end: SYNTHETIC_START + cap.durationMs,
    });
  const run = syntheticRun({
    durationS: 2,
    cwd: cap.dir,
    profiles,
    stalls: [{ atProgress: 0.5, durationMs: 120 }],
    minorGcPerS: 20,
    minorGcMs: 1.5,
  });
  run.dir = cap.dir;
  run.meta.phases = [
    { phase: 'warmup', start: SYNTHETIC_START - 1000, end: SYNTHETIC_START },
    { phase: 'load', start: SYNTHETIC_START, end: SYNTHETIC_START + 2000 },
  ];
  if (run.load) {
    // An open-model run: corrected latency, service time, schedule and a generator warning.
    const l = run.load;
    l.model = 'open';
    l.options.rate = 2000;
    l.serviceTime = { ...l.latency, p50: l.latency.p50 * 0.8, p99: l.latency.p99 * 0.5, max: l.latency.max * 0.5 };
    l.schedule = { late: 12, dropped: 3, intended: 4000, maxLagMs: 8.5 };
    l.generator.warnings = ['generator warning: 12 sends went out late'];
  }
  const report: Report = {
    version: 1,
    hotpathVersion: '0.0.0-test',
    target: { command: run.meta.command, cwd: run.cwd, url: 'http://127.0.0.1:3000/', outcome: run.meta.outcome },
    load: run.load ?? null,
    telemetry: null,
    hotspots: [
      { function: 'hashWork', file: 'server.js', line: 10, kind: 'app', selfMs: 300, selfShare: 0.3, totalMs: 400, totalShare: 0.4 },
      { function: 'notProfiled', file: 'other.js', line: 3, kind: 'app', selfMs: 1, selfShare: 0.001, totalMs: 1, totalShare: 0.001 },
    ],
    findings: [finding(o.hostile === true)],
    runDir: run.dir,
  };
  return { run, report };
}

function finding(hostile: boolean): Finding {
  const tag = hostile ? ` ${HOSTILE_SCRIPT}` : '';
  return {
    code: 'HOTPATH_EVENT_LOOP_BLOCKING',
    category: 'event-loop-blocking',
    severity: 'critical',
    title: `handleRequest blocks the event loop${tag}`,
    summary: `Synchronous hashing and JSON work in handleRequest hold the loop${hostile ? ` ${HOSTILE_NAME}` : ''}.`,
    evidence: {
      eldP99Ms: 42.5,
      utilizationMean: 0.97,
      requests: 1234,
      note: hostile ? HOSTILE_NAME : 'plain',
      growthRatio: 'Infinity',
      alsoFound: [
        { code: 'HOTPATH_SERIALIZATION', category: 'serialization', title: 'JSON work in handleRequest', evidence: { share: 0.2 } },
      ],
    },
    culprit: { function: 'handleRequest', file: 'server.js', line: CULPRIT_LINE },
    recommendation: [
      'Move the **hashing** off the loop: use `crypto.hash` in a worker.',
      '',
      '- first step',
      '- second step with [docs](https://nodejs.org/api/crypto.html)',
      `- a [bad link](javascript:window.__xss=3)${hostile ? ` ${HOSTILE_SCRIPT}` : ''}`,
      '',
      '```js',
      'await pool.run(data);',
      '```',
    ].join('\n'),
    impact: 0.8,
  };
}
