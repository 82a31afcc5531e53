// The committed real profiles (test/fixtures/profiles, made by generate.mjs on Node 22) read
// back through the file readers: the model other engineers' tests can rely on.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { readCpuProfile, readHeapProfile } from '../../src/profile/read-profile.js';
import { buildCallTree } from '../../src/profile/build-call-tree.js';
import { buildHeapTree, topAllocators } from '../../src/profile/build-heap-tree.js';
import { hotspots } from '../../src/profile/hotspots.js';

const fixtures = fileURLToPath(new URL('../../../test/fixtures/profiles/', import.meta.url));

describe('committed profile fixtures', () => {
  it('the Node 22 CPU fixture classifies and attributes as on a live run', async () => {
    const tree = buildCallTree(await readCpuProfile(`${fixtures}work-node22.cpuprofile`), { cwd: '/project' });
    const kinds = new Map(tree.frames.map((f) => [f.name, f.kind]));
    assert.equal(kinds.get('handler'), 'app');
    assert.equal(kinds.get('dispatch'), 'deps');
    assert.equal(kinds.get('processChunkSync'), 'node-core');
    const top = hotspots(tree, { limit: 6, kinds: ['app'] }).map((h) => h.function);
    assert.ok(top.includes('deriveKey') && top.includes('matchRegex'), top.join());
    assert.ok(tree.totalUs > 300_000);
  });

  it('the Node 22 heap fixture names the allocating app functions', async () => {
    const tree = buildHeapTree(await readHeapProfile(`${fixtures}alloc-node22.heapprofile`), { cwd: '/project' });
    const top = topAllocators(tree, { limit: 3 });
    assert.ok(top.length > 0 && top.every((a) => a.file === 'heap.js'), JSON.stringify(top));
    assert.ok(top.some((a) => ['makeObjects', 'roundTrip', 'handle'].includes(a.function)));
  });

  it('a missing file is HOTPATH_ERR_PROFILE', async () => {
    await assert.rejects(readCpuProfile(`${fixtures}nope.cpuprofile`), { code: 'HOTPATH_ERR_PROFILE' });
  });
});
