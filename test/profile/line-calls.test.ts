import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { otherCallsOnLine } from '../../src/profile/line-calls.js';
import { inlineWorkOfLine, JSON_DEEP_COPY } from '../../src/profile/work-kind.js';

const others = (line: string) => otherCallsOnLine(line, inlineWorkOfLine(line)!.at);

describe('inlineWorkOfLine', () => {
  it('calls JSON.parse(JSON.stringify(x)) on one line a deep copy, and finds the rest as before', () => {
    assert.deepEqual(inlineWorkOfLine('  return JSON.parse(JSON.stringify(roles[id]));'), { work: 'json', label: JSON_DEEP_COPY, at: 9 });
    assert.equal(inlineWorkOfLine('const copy = JSON.parse( JSON.stringify(x) )')?.label, JSON_DEEP_COPY);
    assert.equal(inlineWorkOfLine('res.end(JSON.stringify(JSON.parse(text)));')?.label, 'JSON.stringify');
    assert.equal(inlineWorkOfLine('const data = JSON.parse(text);')?.label, 'JSON.parse');
  });
});

describe('otherCallsOnLine', () => {
  it('leaves out the work call and the calls that wrap it', () => {
    assert.deepEqual(others('  res.end(JSON.stringify(body));'), []);
    assert.deepEqual(others('  return send(res, 200, JSON.stringify({ ok: true, items }));'), []);
    assert.deepEqual(others('const data = JSON.parse(text);'), []);
  });

  it('names the calls evaluated on the same line: arguments and later statements', () => {
    assert.deepEqual(others('  const body = JSON.stringify(summarize(buildRows(10240)));'), ['summarize', 'buildRows']);
    assert.deepEqual(others('const s = JSON.stringify(rows.map(toDto)); log(s);'), ['map', 'log']);
    assert.deepEqual(others('if (/^[a-z]+$/.test(normalize(name))) return;'), ['normalize']);
  });

  it('does not take keywords for calls', () => {
    assert.deepEqual(others('if (typeof x === "string") for (const k of JSON.parse(x)) {'), []);
  });
});
