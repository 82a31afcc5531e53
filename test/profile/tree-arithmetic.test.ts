// The model's arithmetic on hand-written profiles: merging, weights from timeDeltas (sorted,
// clamped), windows, attribution and hotspots (a recursive function counted once), malformed input.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildCallTree } from '../../src/profile/build-call-tree.js';
import { hotspots } from '../../src/profile/hotspots.js';
import { parseCpuProfile, asCpuProfile } from '../../src/profile/cpu-profile.js';
import { node, syntheticProfile } from './synthetic-profiles.js';
import { classifyFrame } from '../../src/profile/classify-frame.js';

const cwd = '/srv/app';
const find = (tree: ReturnType<typeof buildCallTree>, name: string) => tree.frames.findIndex((f) => f.name === name);

describe('buildCallTree arithmetic', () => {
  it('merges the optimized and unoptimized copies of a function', () => {
    const tree = buildCallTree(syntheticProfile(cwd), { cwd });
    const work = find(tree, 'work');
    const nodes = [...tree.frame].flatMap((f, i) => (f === work ? [i] : []));
    assert.equal(nodes.length, 1);
    assert.equal(tree.self[nodes[0]], 4000);
    assert.equal(tree.total[nodes[0]], 6000);
    assert.deepEqual(tree.frames[work], { name: 'work', file: 'app.js', line: 11, column: 5, kind: 'app' });
  });

  it('weighs each sample by the time to the next one, never by a nominal interval', () => {
    const tree = buildCallTree(syntheticProfile(cwd), { cwd });
    assert.equal(tree.totalUs, 10_000);
    assert.equal(tree.activeUs, 8000);
    assert.equal(tree.self[[...tree.frame].indexOf(find(tree, '(idle)'))], 2000);
  });

  it('sorts samples defensively and clamps what would be negative', () => {
    const p = syntheticProfile(cwd);
    p.samples = [3, 5, 4];
    p.timeDeltas = [3000, -2000, 4000]; // times 1003000, 1001000, 1005000
    const tree = buildCallTree(p, { cwd });
    // Sorted: 5 @1001000 (2000), 3 @1003000 (2000), 4 @1005000 (until endTime: 5000).
    assert.equal(tree.totalUs, 9000);
    assert.equal(tree.self[[...tree.frame].indexOf(find(tree, 'update'))], 2000);
  });

  it('restricts to a profile-relative window and to an epoch-ms window', () => {
    const rel = buildCallTree(syntheticProfile(cwd), { cwd, window: { startUs: 4000, endUs: 7000 } });
    assert.equal(rel.totalUs, 3000); // samples at 4000, 5000, 6000
    assert.equal(rel.sampleCount, 3);
    assert.equal(rel.dropped, 7);
    const epoch = buildCallTree(syntheticProfile(cwd), {
      cwd,
      window: { startMs: 1_700_000_000_004, endMs: 1_700_000_000_007, profileStartEpochMs: 1_700_000_000_000 },
    });
    assert.deepEqual([...epoch.self], [...rel.self]);
    assert.equal(epoch.startUs, 1_004_000);
    assert.equal(epoch.endUs, 1_007_000);
    assert.ok(!rel.frames.some((f, i) => f.name === 'work' && [...rel.frame].includes(i) && false));
  });

  it('charges core work to the app caller and ranks hotspots by attributed self time', () => {
    const tree = buildCallTree(syntheticProfile(cwd), { cwd });
    const [first, ...rest] = hotspots(tree);
    assert.equal(first.function, 'work');
    assert.equal(first.selfMs, 6); // 4 ms own + 2 ms of hashing charged to it
    assert.equal(first.selfShare, 6000 / 8000);
    assert.ok(!rest.some((h) => h.function === 'update' || h.function === '(idle)'));
    const plain = hotspots(tree, { attributed: false });
    assert.equal(plain.find((h) => h.function === 'update')?.selfMs, 2);
  });

  it("keeps the agent's own frames apart: never charged to the app function that called a hooked API", () => {
    const app = `file://${cwd}/app.js`;
    const agent = '/opt/hotpath/dist/agent/agent-core.cjs';
    const p = asCpuProfile({
      nodes: [
        node(1, '(root)', '', [2]),
        node(2, 'handler', app, [3], 5),
        node(3, 'wrapper', agent, [4], 1750),
        node(4, 'rawFrames', agent, [], 425),
      ],
      startTime: 0,
      endTime: 4000,
      samples: [2, 4, 4, 3],
      timeDeltas: [0, 1000, 1000, 1000],
    });
    const tree = buildCallTree(p, { cwd });
    const list = hotspots(tree);
    assert.equal(list.find((h) => h.function === 'handler')?.selfMs, 1);
    assert.deepEqual(
      list.filter((h) => h.kind === 'agent').map((h) => [h.function, h.selfMs, h.file]),
      [
        ['rawFrames', 2, agent],
        ['wrapper', 1, agent],
      ],
    );
  });

  it('counts a recursive function once per sample in total time', () => {
    const app = `file://${cwd}/r.js`;
    const p = asCpuProfile({
      nodes: [
        node(1, '(root)', '', [2]),
        node(2, 'handle', app, [3], 5),
        node(3, 'next', app, [4], 9),
        node(4, 'handle', app, [5], 5),
        node(5, 'next', app, [], 9),
      ],
      startTime: 0,
      endTime: 3000,
      samples: [5, 4, 5],
      timeDeltas: [0, 1000, 1000],
    });
    const tree = buildCallTree(p, { cwd });
    const handle = find(tree, 'handle');
    const h = hotspots(tree).find((x) => x.frame === handle)!;
    assert.equal(h.totalMs, 3);
    assert.equal(h.totalShare, 1);
  });

  it('classifies special and VM-state frames', () => {
    const ctx = { cwd };
    assert.equal(classifyFrame('(garbage collector)', '', '0', ctx), 'gc');
    assert.equal(classifyFrame('(idle)', '', '0', ctx), 'idle');
    assert.equal(classifyFrame('(EXTERNAL)', '', '0', ctx), 'program');
    assert.equal(classifyFrame('RegExp: a+b', '', '0', ctx), 'v8-builtin');
    assert.equal(classifyFrame('base64Slice', '', '0', ctx), 'native');
    assert.equal(classifyFrame('anonymous', '', '412', ctx), 'deps', 'new Function code');
    assert.equal(classifyFrame('x', 'node:internal/crypto/hash', '9', ctx), 'node-core');
    assert.equal(classifyFrame('x', `file://${cwd}/src/a.js`, '9', ctx), 'app');
    assert.equal(classifyFrame('x', `${cwd}/node_modules/@s/p/a.js`, '9', ctx), 'deps');
    assert.equal(classifyFrame('x', '/elsewhere/lib.js', '9', ctx), 'deps');
    assert.equal(classifyFrame('x', '/elsewhere/lib.js', '9', { cwd, appRoots: ['/elsewhere'] }), 'app');
    // hotpath's agent is its own kind, never the app nor its dependencies, wherever it is installed.
    assert.equal(classifyFrame('wrapper', `file://${cwd}/dist/agent/hotpath-agent.cjs`, '9', ctx), 'agent');
    assert.equal(classifyFrame('rawFrames', '/tmp/hp/dist/agent/agent-core.cjs', '9', ctx), 'agent');
    assert.equal(classifyFrame('x', `${cwd}/node_modules/hotpath/dist/agent/agent-worker.cjs`, '9', ctx), 'agent');
    assert.equal(classifyFrame('x', `file://${cwd}/dist/agent/other.cjs`, '9', ctx), 'app');
  });

  it('rejects malformed profiles with HOTPATH_ERR_PROFILE', () => {
    for (const text of [
      'not json',
      '{}',
      '{"nodes":[],"samples":[],"timeDeltas":[],"startTime":0,"endTime":1}',
      '{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","url":""}}],"samples":[1],"timeDeltas":[],"startTime":0,"endTime":1}',
      '{"nodes":[{"id":1}],"samples":[],"timeDeltas":[],"startTime":0,"endTime":1}',
    ]) {
      assert.throws(
        () => parseCpuProfile(text, 'x.cpuprofile'),
        (e: { code?: string; message: string }) => e.code === 'HOTPATH_ERR_PROFILE' && e.message.includes('x.cpuprofile'),
      );
    }
  });

  it('survives samples naming unknown nodes and cyclic children', () => {
    const p = syntheticProfile(cwd);
    p.samples[0] = 999;
    p.nodes[2].children = [5, 1];
    const tree = buildCallTree(p, { cwd });
    assert.equal(tree.dropped, 1);
    assert.equal(tree.totalUs, 9000);
  });
});
