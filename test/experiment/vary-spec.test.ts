import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyVariant, isNodeCommand, parseVary } from '../../src/experiment/vary-spec.js';

test('parseVary reads a node flag or an environment variable with at least two distinct values', () => {
  assert.deepEqual(parseVary('--max-semi-space-size=16,32,64,128'), {
    kind: 'node-flag',
    name: '--max-semi-space-size',
    values: ['16', '32', '64', '128'],
    text: '--max-semi-space-size=16,32,64,128',
  });
  assert.deepEqual(parseVary(' NODE_CLUSTER_SCHED_POLICY=rr, none '), {
    kind: 'env',
    name: 'NODE_CLUSTER_SCHED_POLICY',
    values: ['rr', 'none'],
    text: 'NODE_CLUSTER_SCHED_POLICY=rr, none',
  });
  for (const [bad, why] of [
    ['16,32', /no values/],
    ['--max-semi-space-size=16', /one value only/],
    ['A=1,,2', /an empty value/],
    ['A=1,1', /given twice/],
    ['-x=1,2', /neither a node flag/],
    ['1A=1,2', /neither a node flag/],
  ] as const) {
    assert.throws(
      () => parseVary(bad),
      (e: Error & { code?: string }) => e.code === 'HOTPATH_ERR_VARY' && why.test(e.message),
      bad,
    );
  }
});

test("applyVariant: a node flag on node's argv, in NODE_OPTIONS for other launchers; a variable in the environment", () => {
  const flag = parseVary('--max-semi-space-size=16,64');
  assert.deepEqual(applyVariant(flag, '64', ['node', 'server.js'], { A: '1' }), {
    command: ['node', '--max-semi-space-size=64', 'server.js'],
    env: { A: '1' },
  });
  assert.deepEqual(applyVariant(flag, '16', ['npm', 'start'], { NODE_OPTIONS: '--enable-source-maps' }), {
    command: ['npm', 'start'],
    env: { NODE_OPTIONS: '--enable-source-maps --max-semi-space-size=16' },
  });
  assert.deepEqual(applyVariant(flag, '16', ['npx', 'tsx', 'app.ts'], {}).env, { NODE_OPTIONS: '--max-semi-space-size=16' });
  const env = parseVary('WORKERS=1,2');
  const input = { WORKERS: '8' };
  assert.deepEqual(applyVariant(env, '2', ['node', 'cluster.js'], input), { command: ['node', 'cluster.js'], env: { WORKERS: '2' } });
  assert.deepEqual(input, { WORKERS: '8' }, "the caller's environment is not changed");
  assert.ok(isNodeCommand(['/usr/local/bin/node', 'x.js']) && isNodeCommand([process.execPath]) && !isNodeCommand(['nodemon', 'x.js']));
});
