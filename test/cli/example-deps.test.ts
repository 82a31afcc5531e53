import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { examplesDir, listExamples } from '../../src/cli/commands/demo.js';
import { cacheDir, exampleDependencies, exampleRunDir, missingDependencies } from '../../src/cli/example-deps.js';
import { HotpathError } from '../../src/errors.js';

const tmp = mkdtempSync(join(tmpdir(), 'hotpath-example-deps-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('example deps: every package an example requires is declared in its own package.json', () => {
  for (const name of listExamples()) {
    const dir = join(examplesDir, name);
    const required = new Set<string>();
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.js'))) {
      for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/require\(['"]([^'".][^'"]*)['"]\)/g)) {
        const spec = m[1];
        if (spec.startsWith('node:') || builtinModules.includes(spec)) continue;
        required.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
      }
    }
    assert.deepEqual(Object.keys(exampleDependencies(dir)).sort(), [...required].sort(), name);
  }
});

test('example deps: in the repository every example finds its packages (npm run demo runs in place)', () => {
  for (const name of listExamples()) assert.deepEqual(missingDependencies(join(examplesDir, name)), [], name);
});

test('example deps: a declared package that does not resolve is missing; none declared, nothing missing', () => {
  const dir = join(tmp, 'needs');
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ dependencies: { 'hotpath-no-such-package': '1.0.0', 'node-gyp-none': '1' } }));
  assert.deepEqual(missingDependencies(dir), ['hotpath-no-such-package', 'node-gyp-none']);
  const plain = join(tmp, 'plain');
  mkdirSync(plain);
  assert.deepEqual(missingDependencies(plain), []);
});

test('example deps: the cache directory follows XDG_CACHE_HOME', () => {
  assert.equal(cacheDir({ XDG_CACHE_HOME: '/x/cache' }), join('/x/cache', 'hotpath'));
  assert.match(cacheDir({}), /[/\\]\.cache[/\\]hotpath$/);
});

test('example deps: an install that cannot run is HOTPATH_ERR_DEMO_SETUP, says what it tried, and leaves no half-installed copy', async () => {
  const dir = join(tmp, 'example');
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ dependencies: { 'hotpath-no-such-package': '1.0.0' } }));
  writeFileSync(join(dir, 'server.js'), '');
  let said = '';
  const stderr = new Writable({
    write(chunk, _enc, cb) {
      said += String(chunk);
      cb();
    },
  });
  const cache = join(tmp, 'cache');
  // No npm on PATH and no npm_execpath: npm cannot be started.
  const env = { XDG_CACHE_HOME: cache, PATH: join(tmp, 'no-bin') };
  await assert.rejects(exampleRunDir('example', dir, { env, stderr }), (err: unknown) => {
    assert.ok(err instanceof HotpathError);
    assert.equal(err.code, 'HOTPATH_ERR_DEMO_SETUP');
    assert.match(err.message, /hotpath-no-such-package@1\.0\.0.*npm was not found/);
    return true;
  });
  assert.match(said, /needs hotpath-no-such-package@1\.0\.0; installing it once into /);
  const examples = join(cache, 'hotpath', 'examples');
  assert.deepEqual(existsSync(examples) ? readdirSync(examples) : [], []);
});
