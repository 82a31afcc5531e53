// A log-linear histogram of non-negative integers (µs) in plain JS: 64 buckets per power of two,
// so values below 128 are exact and larger ones within 1/64 (1.6 %). Recording is an index
// computation and one array increment: it replaces perf_hooks' createHistogram() on the
// per-request path, where each record() is a call into C++ (with the WeakMap it replaced, that
// path cost about 1 % of a small JSON server's CPU per request; see docs/agent.md, Cost).
// Reads the way summarize() reads a perf_hooks histogram, and touch only the buckets up to the
// highest one used (a read of a histogram of sub-millisecond values stays within a few KB).

const SUB_BITS = 6;
const SUB = 1 << SUB_BITS;
/** Buckets up to 2^31 µs (35 minutes); larger values land in the last one. */
const BUCKETS = (31 - SUB_BITS + 1) * SUB + SUB;
const MAX_VALUE = 2 ** 31 - 1;

function indexOf(v: number): number {
  const e = 31 - Math.clz32(v);
  return e < SUB_BITS ? v : (e - SUB_BITS + 1) * SUB + ((v >>> (e - SUB_BITS)) & (SUB - 1));
}

/** The largest value that lands in bucket `i`. */
function highestIn(i: number): number {
  if (i < 2 * SUB) return i;
  const octave = Math.floor(i / SUB);
  const width = 2 ** (octave - 1);
  return (SUB + (i % SUB)) * width + width - 1;
}

export class LogHistogram {
  private readonly buckets = new Float64Array(BUCKETS);
  private n = 0;
  private sum = 0;
  private lo = Infinity;
  private hi = 0;

  /** Highest bucket recorded into since the last reset. */
  private top = -1;

  /** Records an integer >= 0 (negative values count as 0, larger than 2^31 - 1 as that). */
  record(value: number): void {
    const v = value < 0 ? 0 : value > MAX_VALUE ? MAX_VALUE : value | 0;
    const i = indexOf(v);
    this.buckets[i]++;
    if (i > this.top) this.top = i;
    this.n++;
    this.sum += v;
    if (v < this.lo) this.lo = v;
    if (v > this.hi) this.hi = v;
  }

  get count(): number {
    return this.n;
  }
  get min(): number {
    return this.n === 0 ? 0 : this.lo;
  }
  get max(): number {
    return this.hi;
  }
  get mean(): number {
    return this.n === 0 ? 0 : this.sum / this.n;
  }

  /** The value at percentile `p` (0..100): the highest value of its bucket, never above the maximum. */
  percentile(p: number): number {
    if (this.n === 0) return 0;
    const rank = Math.max(1, Math.ceil((p / 100) * this.n));
    let seen = 0;
    for (let i = 0; i <= this.top; i++) {
      seen += this.buckets[i];
      if (seen >= rank) return Math.min(highestIn(i), this.hi);
    }
    return this.hi;
  }

  reset(): void {
    if (this.n === 0) return;
    this.buckets.fill(0, 0, this.top + 1);
    this.top = -1;
    this.n = 0;
    this.sum = 0;
    this.lo = Infinity;
    this.hi = 0;
  }
}
