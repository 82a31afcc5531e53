import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { reloadedModule } from '../../src/analyze/signals/reloaded-module.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';

/** An app whose `loadPage` imports a page module under a new query per call (its source on disk). */
function appWith(importLine: string, loadedUnder: number): { run: ReturnType<typeof syntheticRun>; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-reloaded-'));
  mkdirSync(join(dir, 'pages'));
  const source = ['let n = 0;', 'export async function loadPage(name) {', '  n++;', `  ${importLine}`, '}', ''].join('\n');
  writeFileSync(join(dir, 'loader.mjs'), source);
  writeFileSync(join(dir, 'pages', 'home.mjs'), 'export const page = {};\n');
  const loader = pathToFileURL(join(dir, 'loader.mjs')).href;
  const page = pathToFileURL(join(dir, 'pages', 'home.mjs')).href;
  const run = syntheticRun({ rps: 300, cwd: dir });
  // V8's ranges: 0-based line, column of start and end, then the count.
  run.functionRanges = { [loader]: [['loadPage', 1, 7, 4, 1, 120]] };
  run.scriptUrls = Object.fromEntries(Array.from({ length: loadedUnder }, (_, i) => [`1:0:${100 + i}`, `${page}?v=${i + 1}`]));
  return { run, dir };
}

test('reloaded module: one file loaded under many queries names it and the app function that imports it', () => {
  const { run, dir } = appWith('return import(new URL(`./pages/${name}.mjs?v=${n}`, import.meta.url).href);', 40);
  try {
    const r = reloadedModule(run);
    assert.equal(r?.file, join('pages', 'home.mjs'));
    assert.equal(r.urls, 40);
    assert.deepEqual(r.importer, { function: 'loadPage', file: 'loader.mjs', line: 4 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('reloaded module: a file seen under one or two URLs is no reload', () => {
  const { run, dir } = appWith('return import(`./pages/${name}.mjs`);', 2);
  try {
    assert.equal(reloadedModule(run), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
