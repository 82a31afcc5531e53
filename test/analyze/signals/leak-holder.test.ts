import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeHolder, findHolder, leakHolder } from '../../../src/analyze/signals/leak-holder.js';

const lineOf = (src: string, text: string): number => src.split('\n').findIndex((l) => l.includes(text)) + 1;

test('leak holder: a module-level Map the culprit sets into', () => {
  const src = [
    "const http = require('node:http');",
    'const sessions = new Map();',
    'let seq = 0;',
    'function rememberSession(req) {',
    '  const id = `s${seq++}`; // { not a brace',
    "  sessions.set(id, { id, body: '}' });",
    '  return id;',
    '}',
  ].join('\n');
  const h = findHolder(src, lineOf(src, 'function rememberSession'));
  assert.deepEqual(h, { name: 'sessions', kind: 'Map', scope: 'module', via: 'set', storeLine: 6, declaredLine: 2 });
  const text = describeHolder(h!, { function: 'rememberSession', file: 'server.js', line: 4 });
  assert.match(text, /kept in `sessions`, a Map declared at the module's top level \(server\.js:2\)/);
});

test('leak holder: an array declared in an enclosing function is held by the closure', () => {
  const src = [
    'function makeAuditTrail() {',
    '  const entries = [];',
    '  return function audit(req) {',
    '    const copy = { ...req.headers };',
    '    copy.seen = [];',
    '    copy.seen.push(1);',
    '    entries.push({ copy });',
    '  };',
    '}',
  ].join('\n');
  const h = findHolder(src, 3);
  assert.equal(h?.name, 'entries');
  assert.equal(h?.kind, 'array');
  assert.equal(h?.scope, 'closure');
  assert.equal(h?.enclosing, 'makeAuditTrail');
  assert.equal(h?.storeLine, 7, 'the local `copy` is skipped');
  assert.match(
    describeHolder(h!, { function: 'audit', file: 'a.js', line: 3 }),
    /declared in `makeAuditTrail` \(a\.js:2\) and kept alive by the closure `audit`/,
  );
});

test('leak holder: indexed assignment into a module object, listeners on an emitter, a property of this', () => {
  const obj = ['const byUser = {};', 'const remember = (user, data) => {', '  byUser[user.id] = data;', '};'].join('\n');
  assert.deepEqual(findHolder(obj, 2), { name: 'byUser', kind: 'object', scope: 'module', via: '[]=', storeLine: 3, declaredLine: 1 });
  const bus = ['const bus = new EventEmitter();', 'function subscribe(fn) {', "  bus.on('tick', () => fn());", '}'].join('\n');
  assert.equal(findHolder(bus, 2)?.kind, 'EventEmitter');
  const cls = ['class Cache {', '  put(k, v) {', '    this.items.set(k, v);', '  }', '}'].join('\n');
  assert.deepEqual(findHolder(cls, 2), { name: 'this.items', kind: 'value', scope: 'property', via: 'set', storeLine: 3 });
});

test('leak holder: listeners on an EventTarget reached through a module-level object, a module-level string appended to', () => {
  const signal = [
    'const shutdown = new AbortController();',
    'async function fetchProfile(id) {',
    '  const profile = { id };',
    "  shutdown.signal.addEventListener('abort', () => {",
    '    profile.cancelled = true;',
    '  });',
    '  return profile;',
    '}',
  ].join('\n');
  const h = findHolder(signal, 2);
  assert.deepEqual(h, {
    name: 'shutdown.signal',
    kind: 'EventTarget',
    scope: 'module',
    via: 'addEventListener',
    storeLine: 4,
    declaredLine: 1,
  });
  assert.match(
    describeHolder(h!, { function: 'fetchProfile', file: 'lib/profiles.js', line: 2 }),
    /kept in `shutdown\.signal`, an EventTarget reached from `shutdown`, declared at the module's top level \(lib\/profiles\.js:1\).*adds listeners to it \(`addEventListener`\) at lib\/profiles\.js:4/,
  );
  const trail = [
    "let trail = '';",
    'let hits = 0;',
    'function audit(method, path) {',
    '  hits += 1;',
    '  trail += `${method} ${path}\\n`;',
    '}',
  ].join('\n');
  const t = findHolder(trail, 3);
  assert.deepEqual(
    t,
    { name: 'trail', kind: 'string', scope: 'module', via: '+=', storeLine: 5, declaredLine: 1 },
    'the counter is no holder',
  );
  assert.match(
    describeHolder(t!, { function: 'audit', file: 'lib/audit.js', line: 3 }),
    /a string declared at the module's top level.*appends to it \(`\+=`\)/,
  );
  // A local string built up and returned, a local object's member: the function's own.
  const own = [
    'function render(rows) {',
    "  let html = '';",
    '  const page = { parts: [] };',
    '  for (const r of rows) html += `<li>${r}</li>`;',
    '  page.parts.push(html);',
    '  return page;',
    '}',
  ].join('\n');
  assert.equal(findHolder(own, 1), undefined);
});

test('leak holder: nothing when the function only fills its own locals or its parameters', () => {
  const src = [
    'function build(rows, out) {',
    '  const list = [];',
    '  for (const r of rows) list.push(r);',
    '  out.push(list);',
    '  return list;',
    '}',
  ].join('\n');
  assert.equal(findHolder(src, 1), undefined);
  assert.equal(findHolder(src, 99), undefined);
});

test('leak holder: read from the culprit file under cwd; an unreadable file gives nothing', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'hotpath-holder-'));
  writeFileSync(join(cwd, 'cache.js'), 'const pages = new Map();\nfunction keep(k, v) {\n  pages.set(k, v);\n}\n');
  assert.equal(leakHolder(cwd, { function: 'keep', file: 'cache.js', line: 2 })?.name, 'pages');
  assert.equal(leakHolder(cwd, { function: 'keep', file: 'missing.js', line: 2 }), undefined);
});
