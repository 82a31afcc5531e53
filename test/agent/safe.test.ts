// Fault isolation in the agent (issue 17): a guarded part that throws is disabled and reported
// once by name, and the growth hooks' other hooks keep installing, watching and reporting.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { guardPart, partFailed, reportError, safely, setErrorSink } from '../../src/agent/safe.js';
import { GrowthHooks, type GrowthBody, type GrowthHook } from '../../src/agent/hooks/growth-hooks.js';

const errors: [string, string][] = [];
setErrorSink((what, message) => errors.push([what, message]));

test('guardPart: the first failure disables the part and is reported once, by name; other parts run', () => {
  errors.length = 0;
  let calls = 0;
  const bad = () => {
    calls++;
    throw new Error('broken');
  };
  for (let i = 0; i < 5; i++) assert.equal(guardPart('test:bad', bad), undefined);
  assert.equal(calls, 1, 'not called again once disabled');
  assert.ok(partFailed('test:bad'));
  assert.equal(
    guardPart('test:good', () => 42),
    42,
  );
  assert.ok(!partFailed('test:good'));
  assert.deepEqual(errors, [['test:bad', 'broken']]);
});

test('reportError: once per kind, and an error whose message cannot be read is still reported', () => {
  errors.length = 0;
  for (let i = 0; i < 3; i++)
    safely('test:repeat', () => {
      throw new Error('again');
    });
  const hostile = new Proxy(new Error('x'), {
    get: () => {
      throw new Error('no');
    },
  });
  reportError('test:hostile', hostile);
  assert.deepEqual(errors, [
    ['test:repeat', 'again'],
    ['test:hostile', 'unprintable error'],
  ]);
});

/** A hook that counts into `syncCalls`, and fails where it is told to. */
function hook(api: string, failIn?: 'install' | 'onListen' | 'contribute'): GrowthHook & { installed: boolean; listened: number } {
  return {
    installed: false,
    listened: 0,
    install() {
      if (failIn === 'install') throw new Error(`${api} install`);
      this.installed = true;
    },
    onListen() {
      if (failIn === 'onListen') throw new Error(`${api} listen`);
      this.listened++;
    },
    contribute(into: GrowthBody) {
      into.syncCalls.push({ api, count: 1, totalMs: 1 });
      if (failIn === 'contribute') throw new Error(`${api} contribute`);
    },
  };
}

test('GrowthHooks: a hook that throws in install, onListen or contribute costs only itself', () => {
  errors.length = 0;
  const ok = hook('ok');
  const hooks = new GrowthHooks([
    { name: 't-install', hook: hook('a', 'install') },
    { name: 't-listen', hook: hook('b', 'onListen') },
    { name: 't-ok', hook: ok },
    { name: 't-contribute', hook: hook('c', 'contribute') },
  ]);
  hooks.install();
  const server = net.createServer();
  hooks.onListen(server);
  hooks.onListen(server);
  assert.ok(ok.installed);
  assert.equal(ok.listened, 2, 'the hooks after a failing one still see every listen');
  const body = hooks.snapshot();
  // The failed hooks' partial rows are left out; the healthy one's are there.
  assert.deepEqual(
    body?.syncCalls.map((c) => c.api),
    ['ok'],
  );
  assert.deepEqual(
    errors.map(([what]) => what),
    ['hook:t-install', 'hook:t-listen', 'hook:t-contribute'],
  );
  hooks.snapshot();
  assert.equal(errors.length, 3, 'each failure reported once');
});
