// readRunDir on real files: grouping by thread, stall de-duplication, the load window, and
// tolerance of damage (truncated last line, malformed lines, missing or broken files).

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRunDir } from '../../src/profile/read-run.js';
import { RUN_DIR_VERSION, type RunMeta } from '../../src/run-dir/schema.js';

const base = mkdtempSync(join(tmpdir(), 'hotpath-read-run-dir-'));
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;

const T0 = 1_795_000_000_000;
const env = (pid: number, threadId: number, t: number) => ({ v: 1, pid, threadId, t });
const eld = { count: 10, min: 0, mean: 1, max: 2, p50: 1, p90: 2, p99: 2 };

function sample(pid: number, threadId: number, t: number) {
  return {
    ...env(pid, threadId, t),
    type: 'sample',
    intervalMs: 100,
    eld,
    elu: 0.5,
    cpu: { user: 1, system: 1 },
    mem: { rss: 1, heapUsed: 1, heapTotal: 1, external: 1, arrayBuffers: 1 },
    resources: {},
  };
}

function meta(over: Partial<RunMeta> = {}): RunMeta {
  return {
    version: RUN_DIR_VERSION,
    hotpathVersion: '0.1.0',
    command: ['node', 'app.js'],
    cwd: '/srv/app',
    startedAt: T0,
    phases: [
      { phase: 'starting', start: T0, end: T0 + 500 },
      { phase: 'load', start: T0 + 500, end: T0 + 1500 },
    ],
    processes: [{ pid: 10, threadId: 0, isTarget: true }],
    outcome: { status: 'completed' },
    options: {},
    profiles: [],
    ...over,
  };
}

function runDir(files: Record<string, string>): string {
  const dir = join(base, `run-${++n}`);
  mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const lines = (...msgs: unknown[]) => msgs.map((m) => JSON.stringify(m)).join('\n') + '\n';

describe('readRunDir', () => {
  test('groups telemetry by pid and thread, keeps one entry per stall, takes the window from the load phase', async () => {
    const telemetry = lines(
      {
        ...env(10, 0, T0 + 100),
        type: 'hello',
        ppid: 1,
        argv: ['node', 'app.js'],
        execArgv: [],
        cwd: '/srv/target',
        nodeVersion: 'v22.0.0',
        isMainThread: true,
        isClusterPrimary: false,
      },
      { ...env(10, 0, T0 + 200), type: 'listen', address: '127.0.0.1', port: 3000 },
      sample(10, 0, T0 + 700),
      sample(10, 1, T0 + 650),
      sample(10, 0, T0 + 600),
      { ...env(10, 0, T0 + 800), type: 'gc', events: [{ kind: 'minor', start: T0 + 790, durationMs: 1.5, flags: 0 }] },
      { ...env(10, 0, T0 + 900), type: 'stall', start: T0 + 850, durationMs: 500, ongoing: true },
      { ...env(10, 0, T0 + 1900), type: 'stall', start: T0 + 850, durationMs: 2000, ongoing: false },
      { ...env(10, 0, T0 + 2000), type: 'bye', reason: 'flush' },
    );
    const run = await readRunDir(runDir({ 'meta.json': JSON.stringify(meta()), 'telemetry.ndjson': telemetry }));
    assert.deepEqual(
      run.threads.map((t) => [t.pid, t.threadId]),
      [
        [10, 0],
        [10, 1],
      ],
    );
    const main = run.threads[0];
    assert.equal(main.listens.length, 1);
    assert.deepEqual(
      main.samples.map((s) => s.t),
      [T0 + 600, T0 + 700],
      'samples sorted by time',
    );
    assert.equal(main.gc.length, 1);
    assert.deepEqual(
      main.stalls.map((s) => [s.durationMs, s.ongoing]),
      [[2000, false]],
    );
    assert.deepEqual(run.loadWindow, { start: T0 + 500, end: T0 + 1500 });
    assert.equal(run.cwd, '/srv/target', "the listening agent's cwd");
    assert.deepEqual(run.readWarnings, ['load.json is missing: the load phase did not finish'], 'nothing else is damaged');
    assert.equal(run.load, undefined);
  });

  test('a truncated last line and malformed lines are skipped and described', async () => {
    const good = lines(sample(10, 0, T0 + 600), sample(10, 0, T0 + 700));
    const telemetry = `${good}not json at all\n{"type":"sample"}\n${JSON.stringify(sample(10, 0, T0 + 800))}\n{"v":1,"pid":10,"threadId":0,"t":1,"type":"sam`;
    const run = await readRunDir(runDir({ 'meta.json': JSON.stringify(meta()), 'telemetry.ndjson': telemetry }));
    assert.equal(run.threads[0].samples.length, 3);
    assert.ok(
      run.readWarnings.some((w) => /last line \(6\) is truncated/.test(w)),
      run.readWarnings.join('\n'),
    );
    assert.ok(run.readWarnings.some((w) => /line 3 is not an agent message/.test(w)));
    assert.ok(run.readWarnings.some((w) => /line 4 is not an agent message/.test(w)));
  });

  test('missing meta.json with telemetry present: read, with a warning; missing load.json after a load phase: a warning', async () => {
    const run = await readRunDir(runDir({ 'telemetry.ndjson': lines(sample(7, 0, T0)) }));
    assert.ok(run.readWarnings.some((w) => /meta\.json is missing/.test(w)));
    assert.equal(run.meta.outcome.status, 'failed');
    assert.equal(run.threads.length, 1);
    const run2 = await readRunDir(runDir({ 'meta.json': JSON.stringify(meta()) }));
    assert.ok(run2.readWarnings.some((w) => /load\.json is missing/.test(w)));
  });

  test('a broken load.json is left out with a warning; a listed but missing profile too', async () => {
    const m = meta({
      profiles: [
        { kind: 'cpu', pid: 10, threadId: 0, file: 'cpu-10-0.cpuprofile', start: T0 + 500, end: T0 + 1500 },
        { kind: 'heap', pid: 10, threadId: 0, file: 'heap-10-0.heapprofile', start: T0 + 500, end: T0 + 1500 },
      ],
    });
    const dir = runDir({
      'meta.json': JSON.stringify(m),
      'load.json': '{"requests": ',
      'cpu-10-0.cpuprofile': '{"nodes":[],"samples":[],"timeDeltas":[],"startTime":0,"endTime":1}',
    });
    const run = await readRunDir(dir);
    assert.equal(run.load, undefined);
    assert.ok(run.readWarnings.some((w) => /load\.json is unreadable/.test(w)));
    assert.deepEqual(
      run.profiles.map((p) => [p.kind, p.path]),
      [['cpu', join(dir, 'cpu-10-0.cpuprofile')]],
    );
    assert.ok(run.readWarnings.some((w) => /heap profile .* is listed but missing/.test(w)));
  });

  test('profiles announced only in telemetry (meta.json never finished) are found', async () => {
    const dir = runDir({
      'telemetry.ndjson': lines({
        ...env(10, 0, T0 + 1600),
        type: 'profile',
        kind: 'cpu',
        file: 'cpu-10-0.cpuprofile',
        start: T0 + 500,
        end: T0 + 1500,
      }),
      'cpu-10-0.cpuprofile': '{}',
    });
    const run = await readRunDir(dir);
    assert.equal(run.profiles.length, 1);
    assert.equal(run.profiles[0].pid, 10);
  });

  test("listens of threads that meta.json says were not targets (a launcher's IPC pipe) are dropped", async () => {
    const m = meta({
      processes: [
        { pid: 10, threadId: 0, isTarget: true },
        { pid: 9, threadId: 0, isTarget: false },
      ],
    });
    const telemetry = lines(
      { ...env(9, 0, T0), type: 'listen', address: '/tmp/tsx-0/9.pipe', pipe: '/tmp/tsx-0/9.pipe', server: { kind: 'net' } },
      { ...env(10, 0, T0), type: 'listen', address: '127.0.0.1', port: 3000, server: { kind: 'http' } },
    );
    const run = await readRunDir(runDir({ 'meta.json': JSON.stringify(m), 'telemetry.ndjson': telemetry }));
    assert.deepEqual(
      run.threads.map((t) => [t.pid, t.listens.length]),
      [
        [9, 0],
        [10, 1],
      ],
    );
  });

  test('a path that is not a run directory is HOTPATH_ERR_RUN_DIR', async () => {
    await assert.rejects(readRunDir(join(base, 'nope')), { code: 'HOTPATH_ERR_RUN_DIR' });
    await assert.rejects(readRunDir(runDir({ 'notes.txt': 'hello' })), { code: 'HOTPATH_ERR_RUN_DIR' });
  });

  test('a meta.json of another version is read with a warning', async () => {
    const run = await readRunDir(runDir({ 'meta.json': JSON.stringify({ ...meta(), version: 99 }) }));
    assert.ok(run.readWarnings.some((w) => /version 99/.test(w)));
  });
});

test("the agents' script files are merged over processes; a broken one is a warning", async () => {
  const url = 'file:///srv/app/app.js';
  const dir = runDir({
    'meta.json': JSON.stringify(meta()),
    'telemetry.ndjson': lines(sample(10, 0, T0 + 600)),
    'functions-10-0.json': JSON.stringify({
      v: 1,
      scripts: { [url]: [['handler', 3, 10, 9, 1, 4]], 'file:///srv/app/bad.js': 'not rows' },
    }),
    'functions-11-0.json': JSON.stringify({
      v: 1,
      scripts: { [url]: [['other', 0, 0, 1, 0, 1]], 'file:///srv/app/lib.js': [['f', 1, 0, 2, 1, 1]] },
    }),
    'functions-12-0.json': '{"v":1,"scr',
    'sourcemaps-10-0.json': JSON.stringify({ v: 1, scripts: { [url]: 'data:application/json;base64,e30=' } }),
  });
  const run = await readRunDir(dir);
  assert.deepEqual(
    run.functionRanges,
    {
      [url]: [['handler', 3, 10, 9, 1, 4]],
      'file:///srv/app/lib.js': [['f', 1, 0, 2, 1, 1]],
    },
    'the first file wins for a script; values that are not rows are dropped',
  );
  assert.deepEqual(run.sourceMaps, { [url]: 'data:application/json;base64,e30=' });
  assert.ok(
    run.readWarnings.some((w) => w.startsWith('functions-12-0.json is unreadable') && w.endsWith('its function ranges are left out')),
    run.readWarnings.join('\n'),
  );
});

test("the functions files' script URLs are kept per process and thread (the scripts best-effort coverage left out)", async () => {
  const dir = runDir({
    'meta.json': JSON.stringify(meta()),
    'telemetry.ndjson': lines(sample(10, 0, T0 + 600)),
    'functions-10-0.json': JSON.stringify({ v: 1, scripts: {}, urls: { '450': 'file:///srv/app/lib/quota.js', '7': 42 } }),
    'functions-11-1.json': JSON.stringify({ v: 1, scripts: {}, urls: { '450': 'file:///srv/app/other.js' } }),
  });
  const run = await readRunDir(dir);
  assert.deepEqual(run.scriptUrls, { '10:0:450': 'file:///srv/app/lib/quota.js', '11:1:450': 'file:///srv/app/other.js' });
});

test('call counts are read per thread; rows that are not rows are dropped, a broken file is a warning', async () => {
  const url = 'file:///srv/app/lib/discounts.js';
  const dir = runDir({
    'meta.json': JSON.stringify(meta()),
    'telemetry.ndjson': lines(sample(10, 0, T0 + 600)),
    'calls-10-0.json': JSON.stringify({
      v: 1,
      pid: 10,
      threadId: 0,
      start: T0 + 100,
      end: T0 + 500,
      scripts: {
        [url]: [
          ['evaluateRule', 17, 0, 25, 1, 1131],
          ['bad', 'x'],
          ['computeDiscount', 27, 0, 36, 1, 114],
        ],
      },
    }),
    'calls-11-0.json': JSON.stringify({ v: 1, pid: 11, threadId: 0, start: T0 + 500, end: T0 + 100, scripts: {} }),
    'calls-12-0.json': '{"v":1,"pid"',
  });
  const run = await readRunDir(dir);
  assert.deepEqual(run.callCounts, [
    {
      pid: 10,
      threadId: 0,
      start: T0 + 100,
      end: T0 + 500,
      scripts: {
        [url]: [
          ['evaluateRule', 17, 0, 25, 1, 1131],
          ['computeDiscount', 27, 0, 36, 1, 114],
        ],
      },
    },
  ]);
  assert.ok(
    run.readWarnings.some((w) => w.startsWith('calls-11-0.json is unreadable')),
    run.readWarnings.join('\n'),
  );
  assert.ok(
    run.readWarnings.some((w) => w.startsWith('calls-12-0.json is unreadable') && w.endsWith('its call counts are left out')),
    run.readWarnings.join('\n'),
  );
});

test("a cluster primary's stream is read into its own list, never into samples; a malformed one is skipped with a warning", async () => {
  const primary = (t: number, over: Record<string, unknown> = {}) => ({
    ...env(20, 0, t),
    type: 'primary',
    role: 'cluster-primary',
    intervalMs: 100,
    cpu: { user: 900, system: 100 },
    agentUs: 50,
    elu: 0.1,
    eld,
    mem: { rss: 1, heapUsed: 1, heapTotal: 1 },
    heldSockets: 3,
    handedOff: { 1: 5, 2: 4 },
    workers: 2,
    schedulingPolicy: 2,
    ...over,
  });
  const dir = runDir({
    'meta.json': JSON.stringify(meta()),
    'telemetry.ndjson': lines(
      primary(T0 + 700),
      primary(T0 + 600, { forkSite: [{ function: 'start', file: '/srv/app/server.js', line: 11, column: 34 }] }),
      primary(T0 + 800, { handedOff: { 1: 'five' } }),
      primary(T0 + 900, { role: 'worker' }),
      sample(10, 0, T0 + 700),
    ),
  });
  const run = await readRunDir(dir);
  const t = run.threads.find((x) => x.pid === 20)!;
  assert.deepEqual(t.samples, []);
  assert.deepEqual(
    t.primary?.map((m) => m.t),
    [T0 + 600, T0 + 700],
    'in time order, the malformed ones left out',
  );
  assert.equal(t.primary?.[0].forkSite?.[0].line, 11);
  assert.deepEqual(run.threads.find((x) => x.pid === 10)!.primary ?? [], []);
  assert.equal(run.readWarnings.filter((w) => /missing or malformed fields/.test(w)).length, 2);
});
