// Bad options throw HOTPATH_ERR_PROTECT_OPTION at construction; good ones get their defaults.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveProtectOptions, numberRules } from '../../src/protect/protect-options.js';
import { protect } from '../../src/protect/index.js';

function throwsCoded(options: unknown, mention: RegExp): void {
  assert.throws(
    () => protect(options as never),
    (err: unknown) => {
      const e = err as { code?: string; message?: string };
      assert.equal(e.code, 'HOTPATH_ERR_PROTECT_OPTION');
      assert.match(String(e.message), mention);
      return true;
    },
  );
}

test('defaults: delay guard on at 100 ms, every other signal off', () => {
  const o = resolveProtectOptions({});
  assert.equal(o.maxEventLoopDelay, 100);
  assert.equal(o.maxEventLoopUtilization, 0);
  assert.equal(o.maxHeapUsedBytes, 0);
  assert.equal(o.maxRssBytes, 0);
  assert.equal(o.retryAfter, 1);
  assert.equal(o.recoveryTime, 0);
  assert.deepEqual(o.exempt, []);
  assert.equal(o.onPressure, undefined);
  for (const [key, rule] of Object.entries(numberRules)) assert.equal(o[key as keyof typeof o], rule.default, key);
  assert.deepEqual(resolveProtectOptions(undefined), o);
});

test('negative numbers throw the coded error naming the option', () => {
  throwsCoded({ maxEventLoopDelay: -1 }, /maxEventLoopDelay/);
  throwsCoded({ maxHeapUsedBytes: -5 }, /maxHeapUsedBytes/);
  throwsCoded({ retryAfter: -1 }, /retryAfter/);
});

test('NaN, Infinity and non-numbers throw', () => {
  throwsCoded({ maxEventLoopDelay: Number.NaN }, /maxEventLoopDelay.*NaN/);
  throwsCoded({ maxRssBytes: Infinity }, /maxRssBytes/);
  throwsCoded({ maxEventLoopDelay: '100' }, /maxEventLoopDelay.*"100"/);
  throwsCoded({ sampleInterval: null }, /sampleInterval/);
});

test('out-of-range values throw', () => {
  throwsCoded({ maxEventLoopUtilization: 1.5 }, /maxEventLoopUtilization/);
  throwsCoded({ recoveryRatio: 0 }, /recoveryRatio/);
  throwsCoded({ resolution: 0.5 }, /resolution.*whole/);
  throwsCoded({ sampleInterval: 0 }, /sampleInterval/);
  throwsCoded({ retryAfter: 1.5 }, /retryAfter/);
});

test('unknown keys throw and list the known ones', () => {
  throwsCoded({ maxEventLoopDelayMs: 50 }, /unknown option maxEventLoopDelayMs.*maxEventLoopDelay/);
});

test('wrong types for exempt, onPressure and the options object throw', () => {
  throwsCoded({ exempt: '/health' }, /exempt/);
  throwsCoded({ exempt: ['health'] }, /exempt/);
  throwsCoded({ onPressure: 'reply' }, /onPressure/);
  throwsCoded([], /object/);
  throwsCoded(42, /object/);
});

test('valid options are kept', () => {
  const handler = (): void => {};
  const o = resolveProtectOptions({
    maxEventLoopDelay: 0,
    maxEventLoopUtilization: 0.9,
    exempt: ['/health', /^\/metrics/],
    onPressure: handler,
    recoveryTime: 500,
  });
  assert.equal(o.maxEventLoopDelay, 0);
  assert.equal(o.maxEventLoopUtilization, 0.9);
  assert.equal(o.onPressure, handler);
  assert.equal(o.recoveryTime, 500);
});
