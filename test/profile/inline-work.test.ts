// The frameless work a function's ticks are charged to, from its source lines, on a real file: on
// the line a callback starts on only its own text counts, and the predicate of a lookup written
// just before it is that lookup's linear search; a dependency's lines are read too (minified ones
// are not), and its inline work goes to the app function it is charged to.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildCallTree } from '../../src/profile/build-call-tree.js';
import type { CpuProfile } from '../../src/profile/cpu-profile.js';
import { hotLine } from '../../src/profile/hot-line.js';
import { callersOfWork, workBreakdown, workPlaces, workTotals } from '../../src/profile/work-breakdown.js';
import { node } from './synthetic-profiles.js';

const SOURCE = [
  'function recentActivity(events) {',
  '  return [...events].sort((a, b) => new Date(b.createdAt) - new Date(a.createdAt));',
  '}',
  'function dedupe(items, out) {',
  '  for (const item of items) if (!out.some((o) => o.sku === item.sku)) out.push(item);',
  '}',
].join('\n');

test("a callback is labelled by its own text on its first line, and a lookup's predicate by the lookup", () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-inline-work-'));
  try {
    const file = join(dir, 'feed.js');
    writeFileSync(file, SOURCE);
    const url = pathToFileURL(file).href;
    const lines = SOURCE.split('\n');
    // V8 puts an arrow function at its parameters: 0-based line and column.
    const comparator = node(3, '', url, [], 1);
    comparator.callFrame.columnNumber = lines[1].indexOf('(a, b)');
    comparator.positionTicks = [{ line: 2, ticks: 10 }];
    const outer = node(2, 'recentActivity', url, [3], 0);
    outer.callFrame.columnNumber = lines[0].indexOf('(');
    outer.positionTicks = [{ line: 2, ticks: 4 }];
    const predicate = node(5, '', url, [], 4);
    predicate.callFrame.columnNumber = lines[4].indexOf('(o)');
    predicate.positionTicks = [{ line: 5, ticks: 8 }];
    const profile: CpuProfile = {
      nodes: [node(1, '(root)', '', [2, 4]), outer, comparator, node(4, 'dedupe', url, [5], 3), predicate],
      startTime: 0,
      endTime: 22_000,
      samples: [...Array(10).fill(3), ...Array(4).fill(2), ...Array(8).fill(5)],
      timeDeltas: Array.from({ length: 22 }, (_, i) => (i === 0 ? 0 : 1000)),
    };
    const tree = buildCallTree(profile, { cwd: dir });
    const labelsOf = (name: string, line: number) =>
      (tree.inlineWork ?? [])
        .filter((e) => tree.frames[tree.frame[e.node]].name === name && tree.frames[tree.frame[e.node]].line === line)
        .map((e) => e.work);
    // The comparator (line 2) did not run the spread written before it; the function that did is labelled.
    assert.deepEqual(labelsOf('(anonymous)', 2), []);
    assert.deepEqual(labelsOf('recentActivity', 1), ['copy']);
    // `out.some((o) => ...)`: the predicate's time is the linear search.
    assert.deepEqual(labelsOf('(anonymous)', 5), ['search']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a dependency's hot line is read too: body-parser's JSON.parse is JSON work, with no app code on the stack", () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-inline-deps-'));
  try {
    const pkg = join(dir, 'node_modules', 'body-parser', 'lib', 'types');
    mkdirSync(pkg, { recursive: true });
    const file = join(pkg, 'json.js');
    // body-parser 2.x, lib/types/json.js: parse() at line 3, its JSON.parse at line 5.
    writeFileSync(
      file,
      [
        "'use strict'",
        '',
        'function parse (body) {',
        '  try {',
        '    return JSON.parse(body, reviver)',
        '  } catch (e) { throw e }',
        '}',
      ].join('\n'),
    );
    // A minified dependency: one long line holding a JSON.parse says nothing about where the ticks fell.
    const min = join(dir, 'node_modules', 'tiny', 'index.min.js');
    mkdirSync(join(dir, 'node_modules', 'tiny'));
    writeFileSync(min, `function a(t){return JSON.parse(t)}${';var x=1'.repeat(100)}`);
    const parse = node(3, 'parse', pathToFileURL(file).href, [], 2);
    parse.positionTicks = [
      { line: 5, ticks: 9 },
      { line: 3, ticks: 1 },
    ];
    const minified = node(4, 'a', pathToFileURL(min).href, [], 0);
    minified.positionTicks = [{ line: 1, ticks: 5 }];
    const profile: CpuProfile = {
      nodes: [node(1, '(root)', '', [2]), node(2, 'emit', 'node:events', [3, 4], 471), parse, minified],
      startTime: 0,
      endTime: 15_000,
      samples: [...Array(10).fill(3), ...Array(5).fill(4)],
      timeDeltas: Array.from({ length: 15 }, (_, i) => (i === 0 ? 0 : 1000)),
    };
    const tree = buildCallTree(profile, { cwd: dir });
    const parseFrame = tree.frames.findIndex((f) => f.name === 'parse');
    assert.deepEqual(
      (tree.inlineWork ?? []).map((e) => [tree.frames[tree.frame[e.node]].name, e.label]),
      [['parse', 'JSON.parse']],
    );
    // Its hot line is the dependency's own line.
    assert.equal(hotLine(tree, parseFrame)?.line, 5);
    const json = workPlaces(tree).find((p) => p.work === 'json');
    assert.ok(json);
    assert.equal(json.label, 'JSON.parse');
    assert.equal(json.us, 9000);
    assert.equal(json.unownedUs, 9000, 'no app frame on the stack');
    assert.equal(tree.frames[json.sources[0].frame].name, 'parse');
    assert.equal(workTotals(tree).get('json'), 9000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a dependency's inline JSON goes with it to the app function that called it", () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-inline-deps-'));
  try {
    mkdirSync(join(dir, 'node_modules', 'express', 'lib'), { recursive: true });
    const res = join(dir, 'node_modules', 'express', 'lib', 'response.js');
    writeFileSync(
      res,
      [
        'function stringify (value, replacer, spaces) {',
        '  var json = replacer || spaces ? JSON.stringify(value, replacer, spaces) : JSON.stringify(value)',
        '  return json',
        '}',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'app.js'), 'function report(req, res) {\n  res.json(build())\n}\n');
    const stringify = node(3, 'stringify', pathToFileURL(res).href, [], 0);
    stringify.positionTicks = [{ line: 2, ticks: 8 }];
    const profile: CpuProfile = {
      nodes: [node(1, '(root)', '', [2]), node(2, 'report', pathToFileURL(join(dir, 'app.js')).href, [3], 0), stringify],
      startTime: 0,
      endTime: 10_000,
      samples: [...Array(8).fill(3), 2, 2],
      timeDeltas: Array.from({ length: 10 }, (_, i) => (i === 0 ? 0 : 1000)),
    };
    const tree = buildCallTree(profile, { cwd: dir });
    const report = tree.frames.findIndex((f) => f.name === 'report');
    const items = workBreakdown(tree, report).items;
    assert.equal(items.find((i) => i.label === 'JSON.stringify')?.share, 0.8);
    assert.deepEqual(
      callersOfWork(tree, 'json').map((c) => tree.frames[c.frame].name),
      ['report'],
    );
    assert.equal(workPlaces(tree).find((p) => p.work === 'json')?.unownedUs, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a line calling a function built per call (a template compiled per request) is compiling code, not the spread beside the call', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-inline-compile-'));
  try {
    const file = join(dir, 'quote.js');
    // The probe's shape: `_.template` builds a new function per request; V8 compiles it at its first call.
    const lines = [
      'function renderQuote(quote) {',
      '  const compiled = _.template(cmsTemplate);',
      "  const rows = [{ label: 'Plan', value: quote.plan }];",
      '  return compiled({ ...quote, rows });',
      '}',
      'function mergeQuote(quote, extra) {',
      '  return finish({ ...quote, ...extra });',
      '}',
    ];
    writeFileSync(file, lines.join('\n'));
    const url = pathToFileURL(file).href;
    const lodash = pathToFileURL(join(dir, 'node_modules', 'lodash', 'lodash.js')).href;
    // Each fresh template is a script of its own (lodash.templateSources[<n>]): the same function in many scripts.
    const templates = [10, 11, 12, 13].map((id, k) => {
      const t = node(id, '', `lodash.templateSources[${40 + k}]`, [], 2);
      t.callFrame.scriptId = String(100 + k);
      return t;
    });
    const render = node(2, 'renderQuote', url, [3, ...templates.map((t) => t.id)], 0);
    render.positionTicks = [
      { line: 4, ticks: 30 },
      { line: 2, ticks: 1 },
    ];
    // A function calling one helper (a single script): its line stays a spread copy.
    const merge = node(4, 'mergeQuote', url, [5], 5);
    merge.positionTicks = [{ line: 7, ticks: 10 }];
    const finish = node(5, 'finish', url, [], 8);
    const profile: CpuProfile = {
      nodes: [node(1, '(root)', '', [2, 4]), render, node(3, 'template', lodash, [], 14880), ...templates, merge, finish],
      startTime: 0,
      endTime: 41_000,
      samples: [...Array(31).fill(2), ...Array(10).fill(4)],
      timeDeltas: Array.from({ length: 41 }, (_, i) => (i === 0 ? 0 : 1000)),
    };
    const tree = buildCallTree(profile, { cwd: dir });
    const labels = (name: string) =>
      (tree.inlineWork ?? []).filter((e) => tree.frames[tree.frame[e.node]].name === name).map((e) => [e.work, Math.round(e.us)]);
    // The 30 ticks of line 4 are the compile; line 2 calls lodash's template (a callee with a frame): none.
    assert.deepEqual(labels('renderQuote'), [['compile', 30_000]]);
    assert.deepEqual(labels('mergeQuote'), [['copy', 10_000]]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
