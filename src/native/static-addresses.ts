// The distinct native addresses of a tick log's frames (those no JIT code held: C++ in the node
// binary and the shared libraries), each numbered once, so that a symbol is looked up once per
// address rather than once per frame. A log has a few hundred thousand such frames and a few
// thousand distinct addresses. An open-addressing hash table on typed arrays: addresses are
// doubles (up to 2^47), which a Map hashes far more slowly than this.

export interface StaticAddresses {
  /** The distinct addresses, in the order first met. */
  addresses: Float64Array;
  /** For each frame of the log, the index of its address in `addresses`, or -1 (JIT code, or no address). */
  frameIndex: Int32Array;
}

/** A slot's hash of an address below 2^53: its low and high 32-bit words mixed. */
function hashOf(addr: number, bits: number): number {
  const lo = addr >>> 0;
  const hi = (addr / 4294967296) >>> 0;
  return Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b) >>> (32 - bits);
}

/** Numbers the positive values of `frames` (native addresses; code ids are negative, 0 is none). */
export function staticAddresses(frames: ArrayLike<number>): StaticAddresses {
  let bits = 10;
  let slots = new Int32Array(1 << bits).fill(-1); // index into `list`, -1 empty
  let list = new Float64Array(1 << (bits - 1));
  let count = 0;
  const frameIndex = new Int32Array(frames.length);
  for (let f = 0; f < frames.length; f++) {
    const v = frames[f];
    if (!(v > 0)) {
      frameIndex[f] = -1;
      continue;
    }
    const mask = (1 << bits) - 1;
    let h = hashOf(v, bits);
    let at = slots[h];
    while (at >= 0 && list[at] !== v) {
      h = (h + 1) & mask;
      at = slots[h];
    }
    if (at < 0) {
      at = count++;
      slots[h] = at;
      if (count > list.length) {
        const grown = new Float64Array(list.length * 2);
        grown.set(list);
        list = grown;
      }
      list[at] = v;
      if (count * 2 > slots.length) {
        // Half full: twice the slots, every address placed again.
        bits++;
        slots = new Int32Array(1 << bits).fill(-1);
        const m = (1 << bits) - 1;
        for (let i = 0; i < count; i++) {
          let s = hashOf(list[i], bits);
          while (slots[s] >= 0) s = (s + 1) & m;
          slots[s] = i;
        }
      }
    }
    frameIndex[f] = at;
  }
  return { addresses: list.slice(0, count), frameIndex };
}
