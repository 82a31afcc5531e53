// The JIT code map of a V8 tick log as it stands at one moment of the log: code objects by
// address range, created, moved and deleted as the log says. A new range removes every range
// it overlaps (V8 reused that memory). Sorted arrays with binary search: a log holds a few
// thousand to a few hundred thousand code objects, and lookups (one per stack frame of every
// tick) far outnumber changes.

export class CodeMap<T> {
  private starts: number[] = [];
  private ends: number[] = [];
  private values: T[] = [];

  get size(): number {
    return this.starts.length;
  }

  /** Index of the last range starting at or before `addr`, or -1. */
  private floor(addr: number): number {
    const s = this.starts;
    let lo = 0;
    let hi = s.length - 1;
    if (hi < 0 || addr < s[0]) return -1;
    if (addr >= s[hi]) return hi;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (s[mid] <= addr) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  add(start: number, size: number, value: T): void {
    const end = start + Math.max(size, 1);
    // Remove the ranges that overlap [start, end).
    let first = this.floor(start);
    if (first < 0 || this.ends[first] <= start) first++;
    let last = first;
    while (last < this.starts.length && this.starts[last] < end) last++;
    const removed = last - first;
    if (removed === 0 && first === this.starts.length) {
      this.starts.push(start);
      this.ends.push(end);
      this.values.push(value);
      return;
    }
    this.starts.splice(first, removed, start);
    this.ends.splice(first, removed, end);
    this.values.splice(first, removed, value);
  }

  /** The value whose range holds `addr`. */
  find(addr: number): T | undefined {
    const i = this.floor(addr);
    return i >= 0 && addr < this.ends[i] ? this.values[i] : undefined;
  }

  /** The value of the range that starts exactly at `addr`. */
  at(addr: number): T | undefined {
    const i = this.floor(addr);
    return i >= 0 && this.starts[i] === addr ? this.values[i] : undefined;
  }

  sizeAt(addr: number): number | undefined {
    const i = this.floor(addr);
    return i >= 0 && this.starts[i] === addr ? this.ends[i] - this.starts[i] : undefined;
  }

  /** Removes the range starting at `addr`; false when there is none. */
  delete(addr: number): boolean {
    const i = this.floor(addr);
    if (i < 0 || this.starts[i] !== addr) return false;
    this.starts.splice(i, 1);
    this.ends.splice(i, 1);
    this.values.splice(i, 1);
    return true;
  }

  /** Moves the range starting at `from` to `to` (same size); false when there is none. */
  move(from: number, to: number): boolean {
    const i = this.floor(from);
    if (i < 0 || this.starts[i] !== from) return false;
    const size = this.ends[i] - from;
    const value = this.values[i];
    this.delete(from);
    this.add(to, size, value);
    return true;
  }

  /** Replaces the value of the range starting at `addr`, keeping the range. */
  replace(addr: number, value: T): void {
    const i = this.floor(addr);
    if (i >= 0 && this.starts[i] === addr) this.values[i] = value;
  }
}
