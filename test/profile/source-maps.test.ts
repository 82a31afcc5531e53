// Source maps on real profiles: TypeScript bundled by esbuild (inline map, and a minified
// bundle with a map file) maps back to the .ts file, line and function name.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { buildCallTree } from '../../src/profile/build-call-tree.js';
import { SourceMapResolver } from '../../src/profile/source-maps.js';
import { hotspots } from '../../src/profile/hotspots.js';
import { cpuProfileOf, lineOf, writeProject } from './profile-fixture.js';

const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');

const HANDLER_TS = `import { createHash } from 'node:crypto';

interface Order { id: number; total: number }

export function priceOrders(orders: Order[]): string {
  let digest = '';
  for (const o of orders) {
    digest = createHash('sha256').update(digest + o.id + ':' + o.total).digest('hex');
  }
  return digest;
}
`;

const MAIN_TS = `import { priceOrders } from './handler';

const orders = Array.from({ length: 2000 }, (_, i) => ({ id: i, total: i * 3 }));
const end = Date.now() + 900;
while (Date.now() < end) priceOrders(orders);
`;

describe('source maps', () => {
  let dir: string;
  before(() => {
    dir = writeProject({ 'src/handler.ts': HANDLER_TS, 'src/main.ts': MAIN_TS });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('uses a source map handed over by the agent (no comment in the file)', () => {
    const out = join(dir, 'dist', 'external.js');
    esbuild.buildSync({
      entryPoints: [join(dir, 'src/main.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: out,
      sourcemap: 'external',
      logLevel: 'silent',
    });
    const profile = cpuProfileOf(dir, out);
    assert.ok(!buildCallTree(profile, { cwd: dir }).frames.some((f) => f.file === 'src/handler.ts'), 'no comment, no map');
    const resolver = new SourceMapResolver();
    resolver.addSourceMap(out, readFileSync(`${out}.map`, 'utf8'));
    const fn = buildCallTree(profile, { cwd: dir, resolver }).frames.find((f) => f.name === 'priceOrders');
    assert.equal(fn?.file, 'src/handler.ts');
    assert.equal(fn?.line, lineOf(HANDLER_TS, 'export function priceOrders'));
  });

  it('finds the declaration line of TypeScript run through a loader (tsx) without a map on disk', () => {
    const tsxLoader = createRequire(import.meta.url).resolve('tsx/esm');
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    writeFileSync(join(dir, 'src/run.ts'), MAIN_TS.replace("'./handler'", "'./handler.ts'"));
    const profile = cpuProfileOf(dir, 'src/run.ts', { args: ['--import', tsxLoader] });
    const fn = buildCallTree(profile, { cwd: dir }).frames.find((f) => f.name === 'priceOrders');
    assert.equal(fn?.file, 'src/handler.ts');
    assert.equal(fn?.line, lineOf(HANDLER_TS, 'export function priceOrders'));
    rmSync(join(dir, 'package.json'));
  });

  for (const variant of [
    { name: 'inline map', sourcemap: 'inline' as const, minify: false },
    { name: 'minified with a map file', sourcemap: true, minify: true },
  ]) {
    it(`maps a bundled TypeScript function back to its .ts line and name (${variant.name})`, () => {
      const out = join(dir, 'dist', variant.minify ? 'min.js' : 'bundle.js');
      esbuild.buildSync({
        entryPoints: [join(dir, 'src/main.ts')],
        bundle: true,
        platform: 'node',
        format: 'cjs',
        outfile: out,
        sourcemap: variant.sourcemap,
        minify: variant.minify,
        logLevel: 'silent',
      });
      const profile = cpuProfileOf(dir, out);
      const tree = buildCallTree(profile, { cwd: dir });
      const fn = tree.frames.find((f) => f.name === 'priceOrders');
      assert.ok(
        fn,
        `priceOrders among ${tree.frames
          .filter((f) => f.kind === 'app')
          .map((f) => `${f.name}@${f.file}`)
          .join(', ')}`,
      );
      assert.equal(fn.file, 'src/handler.ts');
      assert.equal(fn.line, lineOf(HANDLER_TS, 'export function priceOrders'));
      assert.equal(fn.kind, 'app');
      assert.equal(hotspots(tree, { limit: 1 })[0].function, 'priceOrders');
      const unmapped = buildCallTree(profile, { cwd: dir, sourceMaps: false });
      assert.ok(unmapped.frames.every((f) => !f.file.endsWith('.ts')));
    });
  }
});
