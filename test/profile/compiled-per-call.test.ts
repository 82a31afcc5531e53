import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compiledPerCall, freshFunctionCall } from '../../src/profile/compiled-per-call.js';

const frame = (functionName: string, url: string, scriptId: string, lineNumber = 2, columnNumber = 0) => ({
  functionName,
  url,
  scriptId,
  lineNumber,
  columnNumber,
});

test('compiled per call: the same function under three scripts or more (lodash templates, new Function)', () => {
  const lodash = [1, 2, 3].map((n) => frame('', `lodash.templateSources[${n}]`, String(200 + n)));
  assert.equal(compiledPerCall(lodash), true);
  assert.equal(compiledPerCall(lodash.slice(0, 2)), false);
  const fnCtor = [1, 2, 3].map((n) => frame('anonymous', '', String(300 + n)));
  assert.equal(compiledPerCall(fnCtor), true);
  // One function optimized and unoptimized (two nodes, one script), or three functions of one file: not built per call.
  assert.equal(compiledPerCall([frame('f', 'file:///a.js', '7'), frame('f', 'file:///a.js', '7'), frame('f', 'file:///a.js', '7')]), false);
  assert.equal(
    compiledPerCall([frame('a', 'file:///a.js', '7', 1), frame('b', 'file:///a.js', '7', 5), frame('c', 'file:///a.js', '7', 9)]),
    false,
  );
});

test('compiled per call: the line calls a local function, not a method, a constructor or a callee with a frame', () => {
  const none = new Set<string>();
  assert.equal(freshFunctionCall('  return compiled({ ...quote, rows });', none), 9);
  assert.equal(freshFunctionCall('  const compiled = _.template(cmsTemplate);', new Set(['template'])), -1);
  assert.equal(freshFunctionCall('  return rows.map((r) => r.id);', none), -1);
  assert.equal(freshFunctionCall('  const d = new Date(x);', none), -1);
  assert.equal(freshFunctionCall('function renderQuote(quote) {', none), -1);
  assert.equal(freshFunctionCall('  if (ok) return render(x);', new Set(['render'])), -1);
});
