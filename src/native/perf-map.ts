// A V8 perf map (/tmp/perf-<pid>.map: `<start hex> <size hex> <name>` per line, appended as code
// is created), read so that an address is named by the code that lives there now.
//
// The file only grows: when V8 frees code (bytecode flushing drops baseline code, a deopt drops
// optimized code, a worker isolate exits) and later puts new code in the same place, both entries
// stay in the file and overlap. perf's own lookup then picks either of them (measured on Node 24:
// optimized `Writable.uncork` named as the flushed top-level code of `node:internal/tls/common`,
// a handler's TurboFan code as a stale `protoGetter`). Here the entry written last among those
// that cover an address wins: the code created most recently is the code still there at the end
// of the run, which is when `hotpath run --native` reads the samples of its load window.

import { readFileSync } from 'node:fs';

interface Entry {
  start: number;
  end: number;
  name: string;
  /** Line order in the file: later is newer. */
  order: number;
}

export class PerfMap {
  private readonly entries: Entry[];
  /** reach[i]: the furthest end among entries[0..i] (sorted by start): where a backward scan can stop. */
  private readonly reach: Float64Array;
  private readonly cache = new Map<number, string | undefined>();

  private constructor(entries: Entry[]) {
    entries.sort((a, b) => a.start - b.start || a.order - b.order);
    this.entries = entries;
    this.reach = new Float64Array(entries.length);
    let far = 0;
    for (let i = 0; i < entries.length; i++) this.reach[i] = far = Math.max(far, entries[i].end);
  }

  /** The map's text; lines that are not `<hex> <hex> <name>` are skipped. */
  static parse(text: string): PerfMap {
    const entries: Entry[] = [];
    let order = 0;
    for (const line of text.split('\n')) {
      const a = line.indexOf(' ');
      const b = a < 0 ? -1 : line.indexOf(' ', a + 1);
      if (b < 0) continue;
      const start = parseInt(line.slice(0, a), 16);
      const size = parseInt(line.slice(a + 1, b), 16);
      if (!Number.isFinite(start) || !Number.isFinite(size) || size <= 0) continue;
      entries.push({ start, end: start + size, name: line.slice(b + 1), order: order++ });
    }
    return new PerfMap(entries);
  }

  /** The map file, or undefined when it cannot be read (gone, another user's). */
  static read(file: string): PerfMap | undefined {
    try {
      return PerfMap.parse(readFileSync(file, 'utf8'));
    } catch {
      return undefined;
    }
  }

  get size(): number {
    return this.entries.length;
  }

  /** The name of the newest entry that covers `address`, or undefined. */
  nameAt(address: number): string | undefined {
    if (this.cache.has(address)) return this.cache.get(address);
    const e = this.entries;
    let lo = 0;
    let hi = e.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (e[mid].start <= address) lo = mid + 1;
      else hi = mid;
    }
    let best: Entry | undefined;
    for (let i = lo - 1; i >= 0 && this.reach[i] > address; i--) {
      if (e[i].end > address && (!best || e[i].order > best.order)) best = e[i];
    }
    this.cache.set(address, best?.name);
    return best?.name;
  }
}
