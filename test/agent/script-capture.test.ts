// captureScripts on a real inspector session (this thread's): the app's scripts that carry a
// source map V8 saw are written to the run directory, others are not; the scripts a real CPU
// profile sampled get their function ranges; and `done` comes once.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';
import { connect, profileLoop } from './helpers/inspector-session.js';
import { captureScripts, isAppScript, sourceMapFileName } from '../../src/agent/profiling/script-capture.js';
import {
  functionRangesFileName,
  functionRows,
  lineStarts,
  profiledScripts,
  type FunctionRangeRow,
} from '../../src/agent/profiling/function-ranges.js';

function capture(runDir: string, scripts: ReadonlySet<string> = new Set()): Promise<number> {
  return new Promise((resolve) => {
    let calls = 0;
    captureScripts(connect, { runDir, pid: 7, threadId: 0, profiledScripts: scripts }, () => {
      calls++;
      setTimeout(() => resolve(calls), 50); // a second call would land meanwhile
    });
  });
}

test('the map URL of an app script compiled in memory is captured; a node_modules one is not', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-maps-'));
  try {
    const map = `data:application/json;base64,${Buffer.from(JSON.stringify({ version: 3, sources: ['app.ts'], names: [], mappings: 'AAAA' })).toString('base64')}`;
    runInThisContext(`(function compiled() { return 1; })\n//# sourceMappingURL=${map}`, { filename: join(dir, 'app.ts') });
    runInThisContext(`(function dep() { return 2; })\n//# sourceMappingURL=${map}`, {
      filename: join(dir, 'node_modules', 'dep', 'index.js'),
    });
    assert.equal(await capture(dir), 1, 'done once');
    const file = join(dir, sourceMapFileName(7, 0));
    const written = JSON.parse(readFileSync(file, 'utf8')) as { v: number; scripts: Record<string, string> };
    assert.equal(written.v, 1);
    const urls = Object.keys(written.scripts);
    assert.ok(
      urls.some((u) => u.endsWith('/app.ts')),
      urls.join(),
    );
    assert.ok(!urls.some((u) => u.includes('node_modules')), urls.join());
    assert.equal(written.scripts[urls.find((u) => u.endsWith('/app.ts'))!], map);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("done comes once whatever the scripts; only the app's files with a map count", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-maps-'));
  try {
    // This process's other scripts with maps (the test's own build output) are in dist/: capture
    // into a run directory and check only that done came once and any file is well formed.
    assert.equal(await capture(dir), 1);
    const file = join(dir, sourceMapFileName(7, 0));
    if (existsSync(file)) assert.equal((JSON.parse(readFileSync(file, 'utf8')) as { v: number }).v, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(isAppScript({ url: 'node:internal/x', sourceMapURL: 'x.map' }), false);
  assert.equal(isAppScript({ url: 'file:///srv/app/a.js', sourceMapURL: '' }), false);
  assert.equal(isAppScript({ url: 'file:///srv/app/a.js', sourceMapURL: 'a.js.map' }), true);
});

test('the functions of a script the CPU profile sampled are written with their lines', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-ranges-'));
  try {
    const source = [
      '(function () {',
      '  function inner(n) {',
      '    let h = n | 0;',
      '    for (let i = 0; i < 5000; i++) h = Math.imul(h ^ i, 16777619);',
      '    return h;',
      '  }',
      '  const outer = (n) => inner(n) + 1;',
      '  return outer;',
      '})()',
    ].join('\n');
    const outer = runInThisContext(source, { filename: join(dir, 'hot.js') }) as (n: number) => number;
    let sink = 0;
    const profile = await profileLoop(() => {
      sink += outer(sink);
    }, 300);
    const sampled = new Set<string>();
    profiledScripts(profile.nodes, sampled);
    const hot = profile.nodes.find((n) => n.callFrame.url.endsWith('hot.js'));
    assert.ok(hot && sampled.has(String(hot.callFrame.scriptId)), 'the script was sampled');
    assert.ok(
      ![...sampled].some((id) => profile.nodes.some((n) => String(n.callFrame.scriptId) === id && n.callFrame.url.startsWith('node:'))),
      "node's own scripts are left out",
    );

    assert.equal(await capture(dir, sampled), 1, 'done once');
    const written = JSON.parse(readFileSync(join(dir, functionRangesFileName(7, 0)), 'utf8')) as {
      v: number;
      scripts: Record<string, FunctionRangeRow[]>;
    };
    assert.equal(written.v, 1);
    const url = Object.keys(written.scripts).find((u) => u.endsWith('hot.js'));
    assert.ok(url, Object.keys(written.scripts).join());
    const rows = written.scripts[url];
    const inner = rows.find((r) => r[0] === 'inner');
    const outerRow = rows.find((r) => r[0] === 'outer');
    assert.ok(inner && outerRow, JSON.stringify(rows));
    assert.deepEqual(inner.slice(1, 5), [1, 2, 5, 3], 'inner spans lines 2-6 (0-based 1-5)');
    assert.deepEqual(outerRow.slice(1, 3), [6, 16], 'outer starts at its parameters on line 7');
    assert.ok(inner[5] > 0, 'inner ran');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('function rows turn coverage offsets into 0-based lines and columns', () => {
  const source = 'a\nfunction f() {\n  return 1;\n}\n';
  assert.deepEqual(lineStarts(source), [0, 2, 17, 29, 31]);
  assert.deepEqual(
    functionRows(
      [
        { functionName: '', ranges: [{ startOffset: 0, endOffset: source.length, count: 1 }] },
        { functionName: 'f', ranges: [{ startOffset: 2, endOffset: 30, count: 3 }] },
        { functionName: 'empty', ranges: [] },
      ],
      source,
    ),
    [
      ['', 0, 0, 4, 0, 1],
      ['f', 1, 0, 3, 1, 3],
    ],
  );
});

test("the scripts worth ranges: ticked lines or anonymous functions, never node's own or the agent's", () => {
  const node = (scriptId: string, url: string, functionName: string, hitCount = 0) => ({
    callFrame: { scriptId, url, functionName },
    hitCount,
    positionTicks: hitCount > 0 ? [{ line: 1, ticks: hitCount }] : undefined,
  });
  const into = new Set<string>();
  profiledScripts(
    [
      node('1', 'file:///app/hot.js', 'work', 5), // ticks: inlined callees may hide there
      node('2', 'file:///app/render.js', ''), // an anonymous caller without samples of its own
      node('3', 'file:///app/cold.js', 'named'), // a named caller only
      node('4', 'node:internal/worker', '', 3),
      node('5', 'file:///opt/hotpath/dist/agent/agent-core.cjs', '', 2),
    ],
    into,
    'file:///opt/hotpath/dist/agent/',
  );
  assert.deepEqual([...into].sort(), ['1', '2']);
});
