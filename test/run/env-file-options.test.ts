// node --env-file's NODE_OPTIONS: read from the files a node command names (the last one that sets
// it wins), only when the environment has none, never from a wrapper's command.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { envFileNodeOptions, envFilesOf, isNodeCommand, withEnvFileNodeOptions } from '../../src/run/env-file-options.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-env-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'a.env'), '# comment\nA=1\nNODE_OPTIONS="--require ./a.cjs --max-old-space-size=512"\n');
writeFileSync(join(dir, 'b.env'), 'export NODE_OPTIONS=--require ./b.cjs\n');
writeFileSync(join(dir, 'plain.env'), 'PORT=3000\n');

test('the env files of a node command, in order, in both spellings, before the script only', () => {
  assert.deepEqual(envFilesOf(['node', '--env-file=a.env', '-r', './x.cjs', '--env-file', 'b.env', 'app.js', '--env-file=c.env']), [
    'a.env',
    'b.env',
  ]);
  assert.deepEqual(envFilesOf(['/usr/local/bin/node', '--env-file-if-exists=a.env', 'app.js']), ['a.env']);
  assert.deepEqual(envFilesOf([process.execPath, '--watch', '--env-file=a.env', 'app.js']), ['a.env']);
  assert.deepEqual(envFilesOf(['npm', 'start', '--env-file=a.env']), [], 'a wrapper is not read');
  assert.equal(isNodeCommand('nodemon'), false);
});

test('NODE_OPTIONS from the files: the last file that sets it wins; none when no file does', () => {
  assert.equal(envFileNodeOptions(['node', '--env-file=a.env', 'app.js'], dir), '--require ./a.cjs --max-old-space-size=512');
  assert.equal(envFileNodeOptions(['node', '--env-file=a.env', '--env-file=b.env', 'app.js'], dir), '--require ./b.cjs');
  assert.equal(envFileNodeOptions(['node', '--env-file=b.env', '--env-file=plain.env', 'app.js'], dir), '--require ./b.cjs');
  assert.equal(envFileNodeOptions(['node', '--env-file=plain.env', 'app.js'], dir), undefined);
  assert.equal(envFileNodeOptions(['node', '--env-file-if-exists=missing.env', 'app.js'], dir), undefined);
});

test("the environment's NODE_OPTIONS win over the file's, as in node", () => {
  const command = ['node', '--env-file=a.env', 'app.js'];
  assert.equal(withEnvFileNodeOptions({ PATH: '/bin' }, command, dir).NODE_OPTIONS, '--require ./a.cjs --max-old-space-size=512');
  assert.equal(withEnvFileNodeOptions({ NODE_OPTIONS: '--enable-source-maps' }, command, dir).NODE_OPTIONS, '--enable-source-maps');
  const env = { PATH: '/bin' };
  assert.equal(withEnvFileNodeOptions(env, ['node', 'app.js'], dir), env, 'no env file: the environment as it was');
});
