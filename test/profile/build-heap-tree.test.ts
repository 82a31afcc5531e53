// Heap trees from a real sampling heap profile (collected objects included, as the agent
// records them): bytes as weight, the allocating app function found and attributed.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildHeapTree, topAllocators } from '../../src/profile/build-heap-tree.js';
import { parseHeapProfile } from '../../src/profile/heap-profile.js';
import type { CallTree } from '../../src/profile/call-tree.js';
import { FAKE_DEP, HEAP_APP, lineOf, writeProject } from './profile-fixture.js';

describe('buildHeapTree on a real sampling heap profile', () => {
  let dir: string;
  let tree: CallTree;
  before(() => {
    dir = writeProject({ 'app.js': HEAP_APP, 'node_modules/fakedep/index.js': FAKE_DEP });
    // Denser sampling and a longer run than the committed fixture: enough bytes for stable shares.
    execFileSync(process.execPath, ['app.js', '8192', '400'], { cwd: dir, timeout: 30_000 });
    tree = buildHeapTree(parseHeapProfile(readFileSync(join(dir, 'out.heapprofile'), 'utf8')), { cwd: dir });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('weighs nodes in bytes and keeps totals consistent', () => {
    assert.equal(tree.unit, 'bytes');
    assert.ok(tree.totalUs > 1_000_000, `sampled ${tree.totalUs} bytes`);
    let sum = 0;
    for (const v of tree.self) sum += v;
    assert.equal(sum, tree.totalUs);
  });

  it('names the allocating app function with its bytes and share', () => {
    const top = topAllocators(tree, { limit: 5 });
    assert.ok(top.length > 0);
    assert.ok(top.every((a) => a.kind === 'app' && a.file === 'app.js'));
    const names = top.map((a) => a.function);
    assert.ok(names.includes('makeObjects') || names.includes('handle') || names.includes('roundTrip'), names.join());
    const mk = tree.frames.find((f) => f.name === 'makeObjects');
    assert.equal(mk?.line, lineOf(HEAP_APP, 'function makeObjects'));
    assert.ok(top[0].share > 0 && top[0].share <= 1);
    const shares = top.reduce((s, a) => s + a.share, 0);
    assert.ok(shares <= 1 + 1e-9);
  });

  it('rejects a malformed heap profile with HOTPATH_ERR_PROFILE', () => {
    for (const text of ['[]', '{"head":{}}', '{"head":{"callFrame":{"functionName":"x","url":""},"selfSize":1,"children":[{}]}}']) {
      assert.throws(() => parseHeapProfile(text, 'h.heapprofile'), { code: 'HOTPATH_ERR_PROFILE' });
    }
  });
});
