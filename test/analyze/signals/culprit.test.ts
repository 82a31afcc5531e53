import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appCallers, isAppSite } from '../../../src/analyze/signals/culprit.js';

test("culprit: hotpath's own agent bundles are never app sites, wherever hotpath is installed", () => {
  // Run from a checkout the agent's bundle lies outside node_modules: its request wrapper sat on a
  // stall's stacks above the router and was named as the function that blocked (probe round s).
  assert.equal(isAppSite({ function: 'wrapper', file: '/work/hotpath/dist/agent/agent-core.cjs', line: 1351, column: 29 }), false);
  assert.equal(isAppSite({ function: 'wrapper', file: 'file:///opt/hotpath/dist/agent/hotpath-agent.cjs', line: 9, column: 1 }), false);
  assert.equal(isAppSite({ function: 'home', file: '/srv/app/server.js', line: 7, column: 14 }), true);
  const stack = [
    { function: 'match', file: '/srv/app/node_modules/express/lib/router/layer.js', line: 110, column: 1 },
    { function: 'wrapper', file: '/work/hotpath/dist/agent/agent-core.cjs', line: 1351, column: 29 },
    { function: 'startServer', file: '/srv/app/server.js', line: 20, column: 3 },
  ];
  assert.deepEqual(
    appCallers({ stack }).map((s) => s.function),
    ['startServer'],
  );
});
