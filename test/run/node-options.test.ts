// NODE_OPTIONS built for the target really preloads a file whose path has spaces and
// quotes, and keeps the user's own NODE_OPTIONS working.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quoteNodeOption, targetNodeOptions } from '../../src/run/node-options.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath node options '));
after(() => rmSync(dir, { recursive: true, force: true }));

test('quoting escapes quotes and backslashes', () => {
  assert.equal(quoteNodeOption('/a b/c'), '"/a b/c"');
  assert.equal(quoteNodeOption('/a"b\\c'), '"/a\\"b\\\\c"');
});

test("a preload under a path with spaces and a quote runs, before the user's own NODE_OPTIONS", () => {
  const sub = join(dir, 'my "odd" dir');
  mkdirSync(sub);
  const agent = join(sub, 'agent.cjs');
  writeFileSync(agent, 'globalThis.order = ["agent"];');
  const user = join(dir, 'user.cjs');
  writeFileSync(user, 'globalThis.order.push("user");');
  const out = execFileSync(process.execPath, ['-e', 'console.log(globalThis.order.join(","))'], {
    env: { ...process.env, NODE_OPTIONS: targetNodeOptions(agent, `--require ${quoteNodeOption(user)}`) },
    encoding: 'utf8',
  });
  assert.equal(out.trim(), 'agent,user');
});

test('without user NODE_OPTIONS there is no trailing space', () => {
  assert.equal(targetNodeOptions('/x/agent.cjs', undefined), '--require "/x/agent.cjs"');
  assert.equal(targetNodeOptions('/x/agent.cjs', '  '), '--require "/x/agent.cjs"');
});
