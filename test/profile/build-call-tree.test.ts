// buildCallTree on real V8 profiles of every installed Node major: classification, the
// attribution rule, the work breakdown and the tree's invariants.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { buildCallTree } from '../../src/profile/build-call-tree.js';
import type { CallTree } from '../../src/profile/call-tree.js';
import { hotspots } from '../../src/profile/hotspots.js';
import { callersOfWork, workBreakdown } from '../../src/profile/work-breakdown.js';
import { appCallersOf, attributedSelf, firstAppAncestor } from '../../src/profile/attribution.js';
import { FAKE_DEP, WORK_APP, cpuProfileOf, lineOf, nodeBinaries, writeProject } from './profile-fixture.js';

const frameNamed = (tree: CallTree, name: string) => tree.frames.findIndex((f) => f.name === name);

for (const { major, bin } of nodeBinaries()) {
  describe(`buildCallTree on a real Node ${major} profile`, () => {
    let dir: string;
    let tree: CallTree;
    let sampleSum = 0;
    before(() => {
      dir = writeProject({ 'app.js': WORK_APP, 'node_modules/fakedep/index.js': FAKE_DEP });
      const profile = cpuProfileOf(dir, 'app.js', { bin });
      tree = buildCallTree(profile, { cwd: dir });
      sampleSum = profile.samples.length;
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('classifies app, dependency, core, builtin and special frames', () => {
      const handler = tree.frames[frameNamed(tree, 'handler')];
      assert.deepEqual(
        { kind: handler.kind, file: handler.file, line: handler.line },
        { kind: 'app', file: 'app.js', line: lineOf(WORK_APP, 'function handler') },
      );
      const dispatch = tree.frames[frameNamed(tree, 'dispatch')];
      assert.equal(dispatch.kind, 'deps');
      assert.equal(dispatch.file, 'node_modules/fakedep/index.js');
      const regex = tree.frames.find((f) => f.name.startsWith('RegExp: '));
      assert.equal(regex?.kind, 'v8-builtin');
      assert.ok(tree.frames.some((f) => f.kind === 'node-core' && f.file === 'node:zlib'));
      for (const f of tree.frames) {
        if (f.kind === 'node-core') assert.match(f.file, /^node:/);
        if (f.kind === 'app') assert.ok(!f.file.startsWith('/') && !f.file.includes('node_modules'), f.file);
      }
    });

    it('weights samples by timeDeltas and keeps the tree consistent', () => {
      assert.equal(tree.sampleCount, sampleSum);
      let selfSum = 0;
      for (let i = 0; i < tree.self.length; i++) selfSum += tree.self[i];
      assert.ok(Math.abs(selfSum - tree.totalUs) < 1e-6 * tree.totalUs);
      assert.equal(tree.total[0], tree.totalUs);
      assert.ok(tree.totalUs > 500_000 && tree.totalUs <= tree.endUs - tree.startUs + 1);
      for (let i = 1; i < tree.frame.length; i++) {
        const p = tree.parent[i];
        assert.ok(p < i && i < p + tree.subtreeSize[p]);
        assert.equal(tree.depth[i], tree.depth[p] + 1);
      }
    });

    it('merges children with the same frame under one parent', () => {
      const seen = new Set<string>();
      for (let i = 1; i < tree.frame.length; i++) {
        const key = `${tree.parent[i]}:${tree.frame[i]}`;
        assert.ok(!seen.has(key), `duplicate child ${tree.frames[tree.frame[i]].name}`);
        seen.add(key);
      }
      const keys = new Set(tree.frames.map((f) => `${f.name}|${f.file}|${f.line}|${f.column}|${f.kind}`));
      assert.equal(keys.size, tree.frames.length);
    });

    it('charges native, builtin, core and dependency time to the nearest app frame', () => {
      const attributed = hotspots(tree, { limit: 200 });
      // Per node: time left outside app code ran with no app frame above it (bootstrap, module loading).
      const charged = attributedSelf(tree);
      let moved = 0;
      for (let i = 1; i < tree.frame.length; i++) {
        const kind = tree.frames[tree.frame[i]].kind;
        if (!['native', 'v8-builtin', 'node-core', 'deps'].includes(kind) || tree.self[i] === 0) continue;
        if (firstAppAncestor(tree, i) >= 0) {
          assert.equal(charged[i], 0, `${tree.frames[tree.frame[i]].name} keeps time under an app frame`);
          moved += tree.self[i];
        } else {
          assert.equal(charged[i], tree.self[i]);
        }
      }
      assert.ok(moved > 0.3 * tree.activeUs, 'most of the work is native/core, charged to app frames');
      const top = attributed
        .filter((h) => h.kind === 'app')
        .slice(0, 5)
        .map((h) => h.function);
      for (const name of ['matchRegex', 'deriveKey', 'compress']) assert.ok(top.includes(name), `${name} in ${top}`);
      const raw = hotspots(tree, { limit: 10, attributed: false });
      assert.ok(
        raw.some((h) => h.function.startsWith('RegExp: ')),
        'unattributed, the regexp engine itself is hot',
      );
      const re = attributed.find((h) => h.function === 'matchRegex')!;
      assert.ok(re.selfShare > 0 && re.selfShare <= 1 && re.totalShare >= re.selfShare - 1e-9);
    });

    it('says what each function spent its time on', () => {
      const top = (name: string) => workBreakdown(tree, frameNamed(tree, name)).items[0];
      assert.equal(top('matchRegex').work, 'regex');
      assert.deepEqual([top('deriveKey').work, top('deriveKey').label], ['crypto', 'PBKDF2 key derivation']);
      assert.deepEqual([top('hashBody').work, top('hashBody').label], ['crypto', 'hashing']);
      assert.equal(top('compress').work, 'zlib');
      assert.deepEqual([top('serializeBody').work, top('serializeBody').label], ['json', 'JSON.stringify']);
      // `JSON.stringify(countRows(makeRows(n)))`: the line's ticks are the inlined callees' (Node 22+), not JSON's
      const json = workBreakdown(tree, frameNamed(tree, 'report')).items.find((e) => e.work === 'json')?.share ?? 0;
      assert.ok(json < 0.2, `report's time taken for JSON: ${json}`);
      const b = workBreakdown(tree, frameNamed(tree, 'deriveKey'));
      assert.ok(Math.abs(b.items.reduce((s, e) => s + e.share, 0) - 1) < 1e-9);
    });

    it('names the app callers of each kind of work', () => {
      const name = (f: number) => tree.frames[f].name;
      assert.equal(name(callersOfWork(tree, 'zlib')[0].frame), 'compress');
      assert.equal(name(callersOfWork(tree, 'json')[0].frame), 'serializeBody');
      const crypto = callersOfWork(tree, 'crypto');
      assert.deepEqual(new Set(crypto.slice(0, 2).map((c) => name(c.frame))), new Set(['deriveKey', 'hashBody']));
      assert.ok(Math.abs(crypto.reduce((s, c) => s + c.share, 0) - 1) < 1e-9);
    });

    it('finds the app callers of a hot core frame', () => {
      const zlibFrame = tree.frames.findIndex((f) => f.file === 'node:zlib' && f.name === 'zlibBufferSync');
      if (zlibFrame < 0) return; // inlined away on this version: nothing to check
      const callers = appCallersOf(tree, zlibFrame);
      assert.equal(tree.frames[callers[0].frame].name, 'compress');
    });
  });
}
