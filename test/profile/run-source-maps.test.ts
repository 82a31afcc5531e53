// Call sites mapped with a source map the agent captured in the target (an in-memory loader's
// inline map), and left alone without one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { transformSync } from 'esbuild';
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
