// own-data: reading and replacing a framework's properties never runs a getter or setter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataFunction, dataValue, replaceData } from '../../../src/agent/hooks/own-data.js';

function trap(): { obj: Record<string, unknown>; calls: string[] } {
  const calls: string[] = [];
  const obj: Record<string, unknown> = { plain: 1 };
  Object.defineProperty(obj, 'router', {
    configurable: true,
    get() {
      calls.push('get router');
      throw new Error('deprecated');
    },
  });
  Object.defineProperty(obj, 'lazy', {
    configurable: true,
    get() {
      calls.push('get lazy');
      return {};
    },
    set() {
      calls.push('set lazy');
    },
  });
  return { obj, calls };
}

test('dataValue reads data properties, own or inherited, and a getter as absent without calling it', () => {
  const { obj, calls } = trap();
  const child = Object.create(obj) as Record<string, unknown>;
  assert.equal(dataValue(obj, 'plain'), 1);
  assert.equal(dataValue(child, 'plain'), 1, 'found up the prototype chain');
  assert.equal(dataValue(obj, 'router'), undefined);
  assert.equal(dataValue(child, 'lazy'), undefined);
  assert.equal(dataValue(obj, 'missing'), undefined);
  assert.deepEqual(calls, []);
  // An own data property shadows an inherited getter, and an own getter an inherited value.
  Object.defineProperty(child, 'router', { value: 'mine' });
  assert.equal(dataValue(child, 'router'), 'mine');
  assert.equal(dataValue(Object.create(child), 'router'), 'mine');
});

test('dataValue on functions, primitives, null and throwing proxies', () => {
  function F(): void {}
  F.handle = function handle(): void {};
  assert.equal(dataFunction(F, 'handle'), F.handle);
  assert.equal(dataValue(F, 'prototype'), F.prototype);
  assert.equal(dataFunction({ handle: 1 }, 'handle'), undefined, 'not a function');
  assert.equal(dataValue(null, 'x'), undefined);
  assert.equal(dataValue(undefined, 'x'), undefined);
  assert.equal(dataValue('text', 'length'), undefined, 'primitives have no own descriptors to read');
  const hostile = new Proxy(
    {},
    {
      getOwnPropertyDescriptor() {
        throw new Error('trap');
      },
    },
  );
  assert.equal(dataValue(hostile, 'x'), undefined);
});

test('replaceData redefines an own data property with its attributes, and refuses accessors, inherited and frozen ones', () => {
  const { obj, calls } = trap();
  Object.defineProperty(obj, 'hidden', { value: 1, writable: true, enumerable: false, configurable: true });
  assert.equal(replaceData(obj, 'hidden', 2), true);
  assert.deepEqual(Object.getOwnPropertyDescriptor(obj, 'hidden'), { value: 2, writable: true, enumerable: false, configurable: true });
  assert.equal(replaceData(obj, 'lazy', 3), false);
  assert.equal(replaceData(obj, 'router', 3), false);
  assert.deepEqual(calls, [], 'no getter or setter ran');
  assert.equal(replaceData(Object.create(obj) as object, 'plain', 5), false, 'inherited: wrapped where it lives');
  const frozen = Object.freeze({ use: 1 });
  assert.equal(replaceData(frozen, 'use', 2), false);
  assert.equal(frozen.use, 1);
});
