// hotpath/protect ships to production on its own: it may import only node: built-ins, its own
// files and the dependency-free error registry, never the CLI, agent, load engine or analyzers.
// Its Fastify plugin also type-checks against Fastify's own types (this file compiles).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { protect } from '../../src/protect/index.js';

const dir = fileURLToPath(new URL('../../src/protect/', import.meta.url));

test('src/protect imports only node: built-ins, its own files and ../errors.js', () => {
  const files = readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.js'));
  assert.ok(files.length >= 8, `found the built files: ${files.join(', ')}`);
  for (const file of files) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm)) {
      const spec = m[1];
      const depth = file.split('/').length - 1;
      const errors = `${'../'.repeat(depth + 1)}errors.js`;
      const own = spec.startsWith('./') || (depth > 0 && spec.startsWith('../') && !spec.startsWith('../'.repeat(depth + 1)));
      assert.ok(spec.startsWith('node:') || own || spec === errors, `${file} imports ${spec}`);
    }
  }
});

test('the Fastify plugin registers on a real, typed Fastify instance and sheds through reply.send', async (t) => {
  const guard = protect({ maxEventLoopDelay: 0, maxHeapUsedBytes: 1, sampleInterval: 20, exempt: ['/health'] });
  const app = Fastify();
  t.after(async () => {
    guard.close();
    await app.close();
  });
  await app.register(guard.fastify);
  app.get('/', async () => 'hello');
  app.get('/health', async () => 'ok');
  let sent = 0;
  app.addHook('onSend', async (_req, _reply, payload) => {
    sent++;
    return payload;
  });
  while (!guard.isUnderPressure()) await new Promise((r) => setTimeout(r, 20));
  const shed = await app.inject({ url: '/', headers: { accept: 'application/json' } });
  assert.equal(shed.statusCode, 503);
  assert.equal(shed.headers['retry-after'], '1');
  assert.equal((shed.json() as { reason: string }).reason, 'heapUsedBytes');
  assert.equal(sent, 1, "Fastify's onSend hook saw the 503");
  assert.equal((await app.inject({ url: '/health' })).body, 'ok');
});

test("the package export 'hotpath/protect' resolves to this module", async () => {
  // A variable specifier: resolved by Node through package.json "exports" at run time.
  const specifier = 'hotpath/protect';
  const mod = (await import(specifier)) as { protect?: unknown };
  assert.equal(typeof mod.protect, 'function');
});
