// captureSourceMaps on a real inspector session (this thread's): the app's scripts that carry a
// source map V8 saw are written to the run directory, others are not, and `done` comes once.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as inspector from 'node:inspector';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';
import { captureSourceMaps, isAppScript, sourceMapFileName } from '../../src/agent/profiling/source-map-capture.js';

const connect = (): inspector.Session => {
  const s = new inspector.Session();
  s.connect();
  return s;
};

function capture(runDir: string): Promise<number> {
  return new Promise((resolve) => {
    let calls = 0;
    captureSourceMaps(connect, { runDir, pid: 7, threadId: 0 }, () => {
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
    runInThisContext(`(function dep() { return 2; })\n//# sourceMappingURL=${map}`, { filename: join(dir, 'node_modules', 'dep', 'index.js') });
    assert.equal(await capture(dir), 1, 'done once');
    const file = join(dir, sourceMapFileName(7, 0));
    const written = JSON.parse(readFileSync(file, 'utf8')) as { v: number; scripts: Record<string, string> };
    assert.equal(written.v, 1);
    const urls = Object.keys(written.scripts);
    assert.ok(urls.some((u) => u.endsWith('/app.ts')), urls.join());
    assert.ok(!urls.some((u) => u.includes('node_modules')), urls.join());
    assert.equal(written.scripts[urls.find((u) => u.endsWith('/app.ts'))!], map);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('done comes once whatever the scripts; only the app\'s files with a map count', async () => {
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
