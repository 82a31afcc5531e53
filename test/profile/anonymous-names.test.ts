// nameAnonymousFrames: an anonymous function is named by the named function it was written in,
// through the run's function ranges; on hand-written ranges, then end to end on a real CPU
// profile with the ranges the agent captured (parseRunCpuProfile, as every view reads a run).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';
import { functionKey, nameAnonymousByCaller, nameAnonymousFrames } from '../../src/profile/anonymous-names.js';
import { parseRunCpuProfile } from '../../src/profile/run-cpu-profile.js';
import { parseRunHeapProfile } from '../../src/profile/run-heap-profile.js';
import { scriptKey, type FunctionRanges } from '../../src/profile/script-functions.js';
import type { CpuCallFrame } from '../../src/profile/cpu-profile.js';
import { captureScripts } from '../../src/agent/profiling/script-capture.js';
import { connect, profileLoop } from '../agent/helpers/inspector-session.js';
import { functionRangesFileName, profiledScripts, type FunctionRangeRow } from '../../src/agent/profiling/function-ranges.js';

const APP = 'file:///srv/app.js';
const frame = (name: string, line: number, col: number, url = APP): CpuCallFrame => ({
  functionName: name,
  scriptId: '7',
  url,
  lineNumber: line,
  columnNumber: col,
});

// app.js (0-based): the module function; computeInWorker 2-12 holding a Promise executor at 3:22
// that holds a listener at 5:20; a top-level callback at 14:10; render 16-20.
const ranges: FunctionRanges = {
  [APP]: [
    ['', 0, 0, 30, 0, 1],
    ['computeInWorker', 2, 0, 12, 1, 4],
    ['', 3, 22, 10, 3, 4],
    ['', 5, 20, 7, 5, 4],
    ['', 14, 10, 14, 40, 2],
    ['render', 16, 0, 20, 1, 3],
  ],
};

test('an anonymous function is named by the nearest named function it lies in, however deep', () => {
  const frames = [frame('', 3, 22), frame('', 5, 20), frame('render', 16, 0), frame('', 14, 10), frame('', 1, 0, 'file:///srv/other.js')];
  nameAnonymousFrames(frames, ranges);
  assert.deepEqual(
    frames.map((f) => f.functionName),
    [
      '(anonymous in computeInWorker)',
      '(anonymous in computeInWorker)',
      'render', // named: untouched
      '', // at the top level of the module: nothing names it
      '', // a script without ranges
    ],
  );
});

test('a CommonJS file: the heap profile names it by its path, the ranges by its file:// URL, and the frame is named all the same', () => {
  // V8 gives a CommonJS script's heap-profile frames a plain path, its CPU-profile frames and
  // coverage a file:// URL (probe: "(anonymous) lib/report.js:10" in gc-pressure beside
  // "(anonymous in buildRegionReport) lib/report.js:10" in event-loop-blocking).
  const node = (id: number, cf: CpuCallFrame, selfSize: number, children: unknown[] = []) => ({ id, callFrame: cf, selfSize, children });
  const heap = {
    head: node(1, frame('(root)', -1, -1, ''), 0, [
      node(2, frame('', 3, 22, '/srv/app.js'), 4096, [node(3, frame('', 5, 20, '/srv/app.js'), 1024)]),
      node(4, frame('', 1, 0, '/srv/other.js'), 512),
    ]),
  };
  const parsed = parseRunHeapProfile({ functionRanges: ranges as Record<string, FunctionRangeRow[]> }, JSON.stringify(heap), {
    path: 'heap.heapprofile',
  });
  const [executor, other] = parsed.head.children;
  assert.equal(executor.callFrame.functionName, '(anonymous in computeInWorker)');
  assert.equal(executor.children[0].callFrame.functionName, '(anonymous in computeInWorker)');
  assert.equal(other.callFrame.functionName, '', 'a script without ranges stays anonymous');
  assert.equal(executor.callFrame.url, '/srv/app.js', 'the frame keeps its own URL');
});

test('scriptKey: a file:// URL and its path are one script; other URLs stay as they are', () => {
  assert.equal(scriptKey('file:///srv/app.js'), scriptKey('/srv/app.js'));
  assert.equal(scriptKey('file:///srv/a%20b.js'), scriptKey('/srv/a b.js'));
  assert.notEqual(scriptKey('file:///srv/app.js'), scriptKey('file:///srv/other.js'));
  assert.equal(scriptKey('node:_http_server'), 'node:_http_server');
  assert.equal(scriptKey(''), '');
});

test('without ranges nothing changes', () => {
  const frames = [frame('', 3, 22)];
  nameAnonymousFrames(frames, undefined);
  nameAnonymousFrames(frames, {});
  assert.equal(frames[0].functionName, '');
});

test('a real profile: the callback passed to map() reads as "(anonymous in scoreAll)"', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-anon-'));
  try {
    const source = [
      '(function () {',
      '  function scoreAll(xs) {',
      '    return xs.map((x) => {',
      '      let h = x | 0;',
      '      for (let i = 0; i < 20000; i++) h = Math.imul(h ^ i, 16777619);',
      '      return h;',
      '    });',
      '  }',
      '  return scoreAll;',
      '})()',
    ].join('\n');
    const scoreAll = runInThisContext(source, { filename: join(dir, 'score.js') }) as (xs: number[]) => number[];
    let sink = 0;
    const profile = await profileLoop(() => {
      sink += scoreAll([sink, 1, 2])[0];
    }, 300);
    const sampled = new Set<string>();
    profiledScripts(profile.nodes, sampled);
    await new Promise<void>((resolve) => captureScripts(connect, { runDir: dir, pid: 7, threadId: 0, profiledScripts: sampled }, resolve));
    const written = JSON.parse(readFileSync(join(dir, functionRangesFileName(7, 0)), 'utf8')) as {
      scripts: Record<string, FunctionRangeRow[]>;
    };

    const parsed = parseRunCpuProfile({ functionRanges: written.scripts }, JSON.stringify(profile), { path: 'score.cpuprofile' });
    const names = new Set(parsed.nodes.filter((n) => n.callFrame.url.endsWith('score.js')).map((n) => n.callFrame.functionName));
    assert.ok(names.has('(anonymous in scoreAll)'), [...names].join(', '));
    assert.ok(!names.has(''), 'no anonymous frame left in the script but the IIFE, which ran before the profile');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('functionKey: a function and its closures share a key; two top-level anonymous functions of one file do not', () => {
  const f = { name: 'render', file: 'lib/a.js', line: 3, column: 10 };
  assert.equal(functionKey(f), functionKey({ name: '(anonymous in render)', file: 'lib/a.js', line: 9, column: 4 }));
  assert.notEqual(functionKey(f), functionKey({ name: 'render', file: 'lib/b.js', line: 3 }));
  const timer = { name: '(anonymous)', file: 'server.js', line: 5, column: 13 };
  const handler = { name: '(anonymous)', file: 'server.js', line: 6, column: 19 };
  assert.notEqual(functionKey(timer), functionKey(handler));
  assert.equal(functionKey(timer), functionKey({ ...timer }));
});

test("a growth hook's anonymous call site is named by the function it was written in, from where it starts or where it calls", async () => {
  const { nameAnonymousSite } = await import('../../src/profile/run-source-maps.js');
  // A call at 1-based 4:30 inside the executor written at 3:22 (0-based) of computeInWorker.
  const site = { function: '(anonymous)', file: APP, line: 4, column: 30 };
  assert.equal(nameAnonymousSite(site, ranges).function, '(anonymous in computeInWorker)');
  assert.equal(nameAnonymousSite({ ...site, functionLine: 4, functionColumn: 23 }, ranges).function, '(anonymous in computeInWorker)');
  // A top-level callback lies in no named function; named sites and scripts without ranges stay as they are.
  assert.equal(nameAnonymousSite({ ...site, line: 15, column: 20 }, ranges).function, '(anonymous)');
  assert.equal(nameAnonymousSite({ ...site, function: 'render', line: 18 }, ranges).function, 'render');
  assert.equal(nameAnonymousSite({ ...site, file: 'file:///srv/other.js' }, ranges).function, '(anonymous)');
  assert.equal(nameAnonymousSite(site, undefined).function, '(anonymous)');
});

test('without ranges for its script, an anonymous function always called by a named function written above it in that script is named by it', () => {
  const W = 'file:///srv/lib/thumbs.js';
  const node = (id: number, cf: CpuCallFrame, children: number[] = []) => ({ id, callFrame: cf, children });
  // root → handler (other script) → renderThumb (W, line 4) → Promise executor (W, line 5)
  //                                 → emit (node:events) → listener (W, line 9): called from elsewhere
  //                                 → (builtin, no script) → callback (W, line 12): builtins skipped
  const nodes = [
    node(1, frame('(root)', -1, -1, ''), [2]),
    node(2, frame('handler', 1, 0), [3, 5]),
    node(3, frame('renderThumb', 4, 0, W), [4, 7]),
    node(4, frame('', 5, 22, W)),
    node(5, frame('emit', 470, 0, 'node:events'), [6]),
    node(6, frame('', 9, 4, W)),
    node(7, frame('map', -1, -1, ''), [8]),
    node(8, frame('', 12, 10, W)),
    node(9, frame('renderThumb', 4, 0, W), [10]),
    node(10, frame('', 9, 4, W)),
  ];
  nameAnonymousByCaller(nodes, {});
  assert.equal(nodes[3].callFrame.functionName, '(anonymous in renderThumb)');
  // Called once by renderThumb and once from an event emitter: where it was written is not known.
  assert.equal(nodes[5].callFrame.functionName, '');
  assert.equal(nodes[9].callFrame.functionName, '');
  assert.equal(nodes[7].callFrame.functionName, '(anonymous in renderThumb)');
  // A script with ranges is the ranges' to name (here: a top-level function, left anonymous).
  const ranged = [node(1, frame('renderThumb', 4, 0, W), [2]), node(2, frame('', 5, 22, W))];
  nameAnonymousByCaller(ranged, { [W]: [['', 0, 0, 20, 0, 1]] });
  assert.equal(ranged[1].callFrame.functionName, '');
  // A caller that starts after the function cannot hold it.
  const below = [node(1, frame('later', 30, 0, W), [2]), node(2, frame('', 5, 22, W))];
  nameAnonymousByCaller(below, {});
  assert.equal(below[1].callFrame.functionName, '');
});
