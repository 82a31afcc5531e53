// The numbering of a tick log's native addresses: each distinct address once, in the order
// first met, every frame pointing at its own; code ids (negative) and missing frames (0) left out.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { staticAddresses } from '../../src/native/static-addresses.js';

test('native addresses are numbered once each, in the order first met, past many table growths', () => {
  const frames: number[] = [];
  // Addresses of the node binary (small), of libraries and JIT ranges (above 2^32, up to 2^47),
  // repeated; code ids and zeros between them.
  const distinct: number[] = [];
  for (let i = 0; i < 20_000; i++) distinct.push(i % 2 === 0 ? 0x400000 + i * 16 : 0x7f0000000000 + i * 4096 + 3);
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (let i = 0; i < 200_000; i++) {
    const r = next() % 10;
    frames.push(r === 0 ? 0 : r === 1 ? -(1 + (next() % 500)) : distinct[next() % distinct.length]);
  }
  const { addresses, frameIndex } = staticAddresses(frames);
  const expected: number[] = [];
  const seen = new Map<number, number>();
  for (const v of frames) if (v > 0 && !seen.has(v)) seen.set(v, expected.push(v) - 1);
  assert.deepEqual([...addresses], expected);
  for (let f = 0; f < frames.length; f++) {
    const v = frames[f];
    assert.equal(frameIndex[f], v > 0 ? seen.get(v) : -1, `frame ${f}`);
  }
});

test('no native frames: nothing numbered', () => {
  const { addresses, frameIndex } = staticAddresses([-1, 0, -3]);
  assert.equal(addresses.length, 0);
  assert.deepEqual([...frameIndex], [-1, -1, -1]);
});
