// Call sites mapped with a source map the agent captured in the target (an in-memory loader's
// inline map), and left alone without one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { transformSync } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mapCallSite, runResolver } from '../../src/profile/run-source-maps.js';

const TS = [
  'interface Options {',
  '  retries: number;',
  '}',
  '',
  'export function load(o: Options): number {',
  '  return readSettings(o.retries);',
  '}',
].join('\n');

test('a call site in in-memory compiled TypeScript maps back to its .ts line', () => {
  const path = '/srv/app/settings.ts';
  const out = transformSync(TS, { loader: 'ts', format: 'esm', sourcemap: 'inline', sourcefile: path });
  const mapUrl = /\/\/# sourceMappingURL=(\S+)/.exec(out.code)![1];
  const generated = out.code.split('\n');
  const line = generated.findIndex((l) => l.includes('readSettings')) + 1;
  const column = generated[line - 1].indexOf('readSettings') + 1;
  const run = { sourceMaps: { [`file://${path}`]: mapUrl } };
  const site = mapCallSite({ function: 'load', file: `file://${path}`, line, column }, runResolver(run));
  assert.deepEqual(site, { function: 'load', file: path, line: 6, column: 10 });
  assert.equal(runResolver(run), runResolver(run), 'one resolver per run');
});

test('a call site without a source map is left as the agent reported it', () => {
  const site = { function: 'handler', file: '/srv/app/no-such-file.js', line: 12, column: 3 };
  assert.deepEqual(mapCallSite(site, runResolver({})), site);
  const builtin = { function: 'x', file: 'node:internal/fs/utils', line: 1, column: 1 };
  assert.deepEqual(mapCallSite(builtin, runResolver({})), builtin);
});

test("a call site in minified code gets its function's original name from where the function starts", () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-minified-'));
  const path = join(dir, 'compress.min.js');
  const src = [
    'const zlib = require("node:zlib");',
    'function compressPayload(body) {',
    '  return zlib.gzipSync(body, { level: 9 });',
    '}',
    'const checksumOf = (body) => zlib.crc32 ? zlib.crc32(body) : body.length;',
    'module.exports = { compressPayload, checksumOf };',
  ].join('\n');
  const out = transformSync(src, { loader: 'js', format: 'cjs', minify: true, sourcemap: 'inline', sourcefile: join(dir, 'compress.js') });
  writeFileSync(path, out.code);
  try {
    const generated = out.code.split('\n');
    const line = generated.findIndex((l) => l.includes('gzipSync')) + 1;
    const text = generated[line - 1];
    // The minifier renamed the functions: V8 reports the short names and where the functions start.
    const fn = /function (\w+)\(/.exec(text)!;
    assert.notEqual(fn[1], 'compressPayload');
    const site = {
      function: fn[1],
      file: `file://${path}`,
      line,
      column: text.indexOf('gzipSync') + 1,
      functionLine: line,
      functionColumn: fn.index + 1,
    };
    const mapped = mapCallSite(site, runResolver({}));
    assert.equal(mapped.function, 'compressPayload');
    assert.equal(mapped.line, 3);
    // An arrow function is named by the binding it is assigned to.
    const arrow = /(\w+)=(\(?\w+\)?)=>/.exec(text)!;
    const arrowSite = {
      function: arrow[1],
      file: `file://${path}`,
      line,
      column: arrow.index + 1,
      functionLine: line,
      functionColumn: arrow.index + arrow[1].length + 2,
    };
    assert.equal(mapCallSite(arrowSite, runResolver({})).function, 'checksumOf');
    // Without the function's start (an older agent), the name stays as reported.
    const { functionLine: _l, functionColumn: _c, ...bare } = site;
    assert.equal(mapCallSite(bare, runResolver({})).function, fn[1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
