// OutputTail keeps only the last bytes of a large output and returns whole last lines.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OutputTail } from '../../src/run/output-tail.js';

test('megabytes in, the last lines out, memory bounded', () => {
  const tail = new OutputTail(1024);
  for (let i = 0; i < 50_000; i++) tail.push(Buffer.from(`line ${i}\n`));
  assert.deepEqual(tail.lines(3), ['line 49997', 'line 49998', 'line 49999']);
  assert.ok(tail.lines(1000).length < 200, 'only about 1 KB is kept');
});

test('CRLF and blank lines are tidied', () => {
  const tail = new OutputTail();
  tail.push(Buffer.from('a\r\n\r\nb  \n'));
  assert.deepEqual(tail.lines(), ['a', 'b']);
});
