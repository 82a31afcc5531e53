// Run directory names: readable, file-system safe, unique even when two runs start in the same second.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createRunDir, runName } from '../../src/run-dir/create-run-dir.js';

const base = mkdtempSync(join(tmpdir(), 'hotpath-create-run-dir-'));
after(() => rmSync(base, { recursive: true, force: true }));

test('runName names the app, not the launcher', () => {
  assert.equal(runName(['node', 'src/server.js']), 'server');
  assert.equal(runName(['npm', 'start']), 'start');
  assert.equal(runName(['npx', 'tsx', 'app.ts']), 'app');
  assert.equal(runName(['node', '--import', './hook.mjs', 'main.mjs']), 'main');
  assert.equal(runName(['node', '-r', 'dotenv/config', 'api.cjs']), 'api');
  assert.equal(runName(['./my server!']), 'my-server');
  assert.equal(runName(['http://127.0.0.1:3000/']), '127.0.0.1-3000');
  assert.equal(runName([]), 'run');
});

test('two runs in the same second get distinct directories', async () => {
  const now = new Date(2026, 10, 22, 3, 15, 2);
  const a = await createRunDir(base, ['node', 'app.js'], now);
  const b = await createRunDir(base, ['node', 'app.js'], now);
  assert.equal(basename(a), '20261122-031502-app');
  assert.equal(basename(b), '20261122-031502-app-2');
  assert.ok(statSync(b).isDirectory());
});

test('an output path that cannot be created is HOTPATH_ERR_OUT_DIR', async () => {
  const file = join(base, 'a-file');
  writeFileSync(file, '');
  await assert.rejects(createRunDir(join(file, 'sub'), ['node', 'x.js']), { code: 'HOTPATH_ERR_OUT_DIR' });
});
