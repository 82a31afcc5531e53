import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgv, resolveOptions, formatOptions, type OptionSpec } from '../../src/options/option-spec.js';

const specs: OptionSpec[] = [
  {
    key: 'connections',
    flag: 'connections',
    short: 'c',
    type: 'integer',
    min: 1,
    max: 10000,
    default: 10,
    description: 'Connections',
    valueName: '<n>',
  },
  {
    key: 'duration',
    flag: 'duration',
    short: 'd',
    type: 'duration',
    unit: 's',
    min: 0.001,
    default: 10,
    description: 'Duration',
    conflicts: ['amount'],
  },
  { key: 'amount', flag: 'amount', short: 'a', type: 'integer', min: 1, description: 'Requests' },
  { key: 'timeout', flag: 'timeout', type: 'duration', unit: 'ms', min: 1, default: 10000, description: 'Timeout' },
  { key: 'headers', flag: 'header', short: 'H', type: 'strings', description: 'Header' },
  { key: 'keepalive', flag: 'keepalive', type: 'boolean', default: true, description: 'Keep-alive' },
  {
    key: 'workers',
    flag: 'workers',
    short: 'w',
    type: 'integer',
    min: 1,
    max: 256,
    default: 1,
    keywords: { auto: 'auto' },
    description: 'Workers',
  },
];

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { code: string }).code;
  }
  return 'no error';
};

test('parses long, short, attached, inline and repeated forms', () => {
  const p = parseArgv(specs, [
    '-c',
    '50',
    '--duration=2m',
    '-H',
    'a: 1',
    '-Hb: 2',
    '--no-keepalive',
    'http://x',
    '--timeout',
    '250ms',
    '--',
    'node',
    '-c',
    'x',
  ]);
  assert.deepEqual(p.values, { connections: 50, duration: 120, headers: ['a: 1', 'b: 2'], keepalive: false, timeout: 250, workers: 1 });
  assert.deepEqual(p.positionals, ['http://x']);
  assert.deepEqual(p.rest, ['node', '-c', 'x']);
});

test('durations accept units and plain numbers in the option unit', () => {
  assert.equal(parseArgv(specs, ['-d', '500ms']).values.duration, 0.5);
  assert.equal(parseArgv(specs, ['-d', '3']).values.duration, 3);
  assert.equal(parseArgv(specs, ['--timeout', '2s']).values.timeout, 2000);
});

test('bad values, unknown options and conflicts are coded errors', () => {
  assert.equal(
    code(() => parseArgv(specs, ['-c', '-5'])),
    'HOTPATH_ERR_INVALID_OPTION',
  );
  assert.equal(
    code(() => parseArgv(specs, ['-c', '1e9'])),
    'HOTPATH_ERR_INVALID_OPTION',
  );
  assert.equal(
    code(() => parseArgv(specs, ['-c', 'ten'])),
    'HOTPATH_ERR_INVALID_OPTION',
  );
  assert.equal(
    code(() => parseArgv(specs, ['-c', '1.5'])),
    'HOTPATH_ERR_INVALID_OPTION',
  );
  assert.equal(
    code(() => parseArgv(specs, ['-d', '10 years'])),
    'HOTPATH_ERR_INVALID_OPTION',
  );
  assert.equal(
    code(() => parseArgv(specs, ['--nope'])),
    'HOTPATH_ERR_UNKNOWN_OPTION',
  );
  assert.equal(
    code(() => parseArgv(specs, ['-c'])),
    'HOTPATH_ERR_INVALID_OPTION',
  );
  assert.equal(
    code(() => parseArgv(specs, ['-d', '1', '-a', '5'])),
    'HOTPATH_ERR_INVALID_OPTION',
  );
});

test('the programmatic API shares validation and defaults', () => {
  assert.deepEqual(resolveOptions(specs, { connections: 3, workers: 'auto' }), {
    connections: 3,
    workers: 'auto',
    duration: 10,
    timeout: 10000,
    keepalive: true,
  });
  assert.equal(
    code(() => resolveOptions(specs, { connections: NaN })),
    'HOTPATH_ERR_INVALID_OPTION',
  );
  assert.equal(
    code(() => resolveOptions(specs, { conections: 3 })),
    'HOTPATH_ERR_UNKNOWN_OPTION',
  );
});

test('help text comes from the same declaration', () => {
  const help = formatOptions(specs);
  assert.match(help, /-c, --connections <n>\s+Connections \(default: 10\)/);
  assert.match(help, /--no-keepalive/);
  assert.match(help, /-d, --duration/);
});
