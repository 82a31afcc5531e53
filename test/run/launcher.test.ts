// launched(): a parent that only started its child (a launcher), told from an app that forks a
// helper, by the hellos both sent (argv, cwd).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launched } from '../../src/run/launcher.js';

const hello = (argv: string[], cwd = '/srv/app') => ({ argv, cwd });

test('a launcher package anywhere it is installed (local, global, corepack), by its own folder name only', () => {
  const child = hello(['/usr/bin/node', '/srv/app/server.js']);
  for (const script of [
    '/srv/app/node_modules/tsx/dist/cli.mjs',
    '/usr/lib/node_modules/npm/bin/npm-cli.js',
    '/usr/lib/node_modules/corepack/dist/pnpm.js',
    '/srv/app/node_modules/nodemon/bin/nodemon.js',
    '/srv/app/node_modules/@swc-node/register/bin.js',
  ])
    assert.equal(launched(hello(['/usr/bin/node', script, 'start']), child), true, script);
  // A package whose name only starts like a launcher's, and an app of its own: not launchers.
  assert.equal(launched(hello(['/usr/bin/node', '/srv/app/node_modules/tsx-app/server.js']), child), false);
  assert.equal(launched(hello(['/usr/bin/node', '/srv/app/main.js']), child), false);
});

test("a parent whose argument names the child's script (any runner of that kind), resolved against its cwd", () => {
  const child = hello(['/usr/bin/node', '/srv/app/src/app.ts']);
  assert.equal(launched(hello(['/usr/bin/node', '/opt/runner/bin.js', 'watch', 'src/app.ts']), child), true);
  assert.equal(launched(hello(['/usr/bin/node', '/opt/runner/bin.js', './app.ts'], '/srv/app/src'), child), true);
  // A flag is no script; an app that forks itself with other arguments is no launcher.
  assert.equal(launched(hello(['/usr/bin/node', '/opt/runner/bin.js', '--src/app.ts']), child), false);
  assert.equal(launched(hello(['/usr/bin/node', '/srv/app/src/app.ts']), hello(['/usr/bin/node', '/srv/app/src/app.ts', 'worker'])), false);
});
