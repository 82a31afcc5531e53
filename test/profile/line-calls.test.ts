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

describe('inlineWorkOfLine: builtins that run without a frame', () => {
  it('recognises Intl formatters and the toLocale* shortcuts that build one per call', () => {
    assert.equal(inlineWorkOfLine('  const fmt = new Intl.NumberFormat(locale, { style: "currency", currency });')?.work, 'intl');
    assert.equal(inlineWorkOfLine('  return row.price.toLocaleString("de-DE", { style: "currency", currency: "EUR" });')?.work, 'intl');
    assert.equal(inlineWorkOfLine('  items.sort((a, b) => a.name.localeCompare(b.name));')?.work, 'intl');
    assert.equal(inlineWorkOfLine('  const upper = name.toLocaleUpperCase();'), undefined);
  });

  it('recognises Errors built (their stack capture), also at the super() of an Error subclass', () => {
    assert.equal(inlineWorkOfLine('      errors.push(new ValidationError(field, rule));')?.work, 'errors');
    assert.equal(inlineWorkOfLine('  throw new errors.NotFoundError(id);')?.work, 'errors');
    assert.equal(inlineWorkOfLine('    Error.captureStackTrace(this, Check);')?.work, 'errors');
    assert.equal(inlineWorkOfLine('    super(message);', 'ValidationError')?.work, 'errors');
    assert.equal(inlineWorkOfLine('    super(options);', 'Repository'), undefined);
  });

  it('recognises spread copies into new literals, not argument spreads', () => {
    assert.equal(inlineWorkOfLine('  (acc, s) => ({ ...acc, [s.region]: [...(acc[s.region] || []), s] }), {});')?.work, 'copy');
    assert.equal(inlineWorkOfLine('  return [...list, item];')?.work, 'copy');
    assert.equal(inlineWorkOfLine('  return Math.max(...values);'), undefined);
  });

  it('recognises lookups that scan an array, not one-pass filters', () => {
    assert.equal(inlineWorkOfLine('    if (!out.some((o) => o.sku === item.sku)) out.push(item);')?.work, 'search');
    assert.equal(inlineWorkOfLine('  const user = users.find((u) => u.id === id);')?.work, 'search');
    assert.equal(inlineWorkOfLine('  if (seen.includes(id)) continue;')?.work, 'search');
    assert.equal(inlineWorkOfLine('  const open = rows.filter((r) => r.open).map(toView);'), undefined);
  });

  it('keeps the more specific work first: JSON and regexps before the rest', () => {
    assert.equal(inlineWorkOfLine('  return JSON.stringify({ ...base, items });')?.work, 'json');
    assert.equal(inlineWorkOfLine('  if (/^[a-z]+$/.test(name) && list.includes(name)) return;')?.work, 'regex');
  });
});
