// C++ symbols of the node binary and the shared libraries a tick log names, for the libraries
// with ticks, all at once: the ELF symbol table read in process (elf-symbols.ts; the dynamic one
// when a library is stripped), else `nm -n -S` (`-D` for a stripped library), whose tables are
// cached per file (path, size, mtime, inode) under ~/.cache/hotpath/symbols so the next log of
// the same binary runs no nm (the in-process reader needs no cache: it reads the node binary's
// table faster than a cache file could be read). Function symbols only (t, T, w, W), as V8's own
// tick processor takes them. Tables are typed arrays of addresses; names stay in the file's
// string table until a tick asks for one, and stay mangled here: the few that ticks use are
// demangled at the end with one `c++filt` (demangle()). An executable (ET_EXEC) holds absolute
// addresses; a shared object or PIE (ET_DYN) is relocated by its load address from the log.
//
// Every library ends with a status: `ok`, or why its ticks stay unnamed (the file is gone,
// nm is missing, the file is not the binary that wrote the log), which the output reports.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { openSync, readSync, closeSync, statSync, mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { LibraryRange } from './tick-log.js';
import { readElfFunctionSymbols, type SymbolList } from './elf-symbols.js';

export type LibraryStatus = 'ok' | 'missing' | 'no-symbols' | 'nm-missing' | 'nm-failed' | 'mismatch' | 'pseudo';

export interface LibrarySymbols {
  path: string;
  start: number;
  end: number;
  /** Added to a symbol's address from nm to get its address in the process. */
  slide: number;
  status: LibraryStatus;
  /** Why the library's symbols are not used (status other than ok). */
  reason?: string;
  /** A warning that leaves the symbols in use (the file changed after the log was written). */
  warning?: string;
  /** Sorted by start. */
  starts: Float64Array;
  ends: Float64Array;
  /** The (mangled) name of the k-th symbol, read when asked for. */
  name(k: number): string;
}

const ELF_MAGIC = 0x464c457f;

/** `exec` (ET_EXEC: absolute addresses), `dyn` (ET_DYN: relative), or undefined if not ELF. */
function elfType(path: string): 'exec' | 'dyn' | 'other' | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const head = Buffer.alloc(18);
    if (readSync(fd, head, 0, 18, 0) < 18 || head.readUInt32LE(0) !== ELF_MAGIC) return undefined;
    const type = head[5] === 2 ? head.readUInt16BE(16) : head.readUInt16LE(16);
    return type === 2 ? 'exec' : type === 3 ? 'dyn' : 'other';
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function runNm(nm: string, args: string[]): Promise<{ out: string; error?: NodeJS.ErrnoException; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(nm, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', (error: NodeJS.ErrnoException) => resolve({ out: '', error, code: null }));
    child.on('close', (code) => resolve({ out: Buffer.concat(chunks).toString('utf8'), code }));
  });
}

interface RawSymbol {
  start: number;
  size: number;
  name: string;
}

/** Parses `nm -n -S` lines: `<addr> [<size>] <type> <name>`, function symbols only. */
export function parseNmOutput(out: string, into: RawSymbol[]): void {
  let pos = 0;
  const n = out.length;
  while (pos < n) {
    let nl = out.indexOf('\n', pos);
    if (nl < 0) nl = n;
    const line = out.slice(pos, nl);
    pos = nl + 1;
    const a = line.indexOf(' ');
    if (a <= 0) continue;
    const b = line.indexOf(' ', a + 1);
    if (b < 0) continue;
    let typePos = a + 1;
    let size = 0;
    if (b - a > 2) {
      // A size column is present.
      size = parseInt(line.slice(a + 1, b), 16);
      typePos = b + 1;
    }
    const t = line[typePos];
    if ((t !== 't' && t !== 'T' && t !== 'w' && t !== 'W') || line[typePos + 1] !== ' ') continue;
    const start = parseInt(line.slice(0, a), 16);
    if (!(start > 0)) continue;
    into.push({ start, size, name: line.slice(typePos + 2) });
  }
}

const emptyTable = { starts: new Float64Array(0), ends: new Float64Array(0), name: () => '' };

/** A list made of parsed symbols (nm's output, the cache). */
function listOf(raw: readonly RawSymbol[]): SymbolList {
  return {
    count: raw.length,
    starts: Float64Array.from(raw, (r) => r.start),
    sizes: Float64Array.from(raw, (r) => r.size),
    name: (i) => raw[i].name,
  };
}

/** Bits of a sort key that hold the symbol's index (so a key sorts by start, then index). */
const INDEX_BITS = 2 ** 21;

/**
 * The symbols' indices by start, then by their order in the list. One native sort of numbers
 * (start × 2²¹ + index, exact below 2⁵³) when the addresses fit in 32 bits, as the node binary's
 * and shared objects' file addresses do; a comparator sort of the indices otherwise.
 */
function sortedOrder(list: SymbolList): Uint32Array | Float64Array {
  const n = list.count;
  const starts = list.starts;
  if (n < INDEX_BITS) {
    const keys = new Float64Array(n);
    let i = 0;
    for (; i < n && starts[i] < 2 ** 32; i++) keys[i] = starts[i] * INDEX_BITS + i;
    if (i === n) return keys.sort();
  }
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  return order.sort((a, b) => starts[a] - starts[b] || a - b);
}

/**
 * The table of one library: symbols by start, within [lo, hi) once relocated by `slide`. Of
 * aliases at one address the largest (the sized, static one) is kept, the first listed of equal
 * ones; a symbol without a size runs to the next one.
 */
function table(list: SymbolList, slide: number, lo: number, hi: number): Pick<LibrarySymbols, 'starts' | 'ends' | 'name'> {
  const sorted = sortedOrder(list);
  const keyed = sorted instanceof Float64Array;
  const n = sorted.length;
  const rs = list.starts;
  const rsize = list.sizes;
  const starts = new Float64Array(n);
  const ends = new Float64Array(n);
  const index = new Uint32Array(n);
  let count = 0;
  let next = n > 0 ? (keyed ? sorted[0] % INDEX_BITS : sorted[0]) : 0;
  for (let p = 0; p < n;) {
    const first = next;
    const at = rs[first];
    // The run of aliases at this address: the largest size wins, the first of equal ones.
    let best = first;
    let q = p + 1;
    for (; q < n; q++) {
      next = keyed ? sorted[q] % INDEX_BITS : sorted[q];
      if (rs[next] !== at) break;
      if (rsize[next] > rsize[best]) best = next;
    }
    const start = at + slide;
    if (start >= lo && start < hi) {
      const end = rsize[best] > 0 ? start + rsize[best] : q < n ? rs[next] + slide : hi;
      starts[count] = start;
      ends[count] = Math.min(end, hi);
      index[count] = best;
      count++;
    }
    p = q;
  }
  return { starts: starts.subarray(0, count), ends: ends.subarray(0, count), name: (k) => list.name(index[k]) };
}

export interface SymbolizeOptions {
  nm?: string;
  /** When the log was written (its mtime): a library changed later may not match it. */
  logMtimeMs?: number;
  /** Builtins the log placed, to check that the binary on disk is the one that ran. */
  builtins?: readonly { name: string; start: number }[];
  /** Directory of the symbol cache; `false` turns it off (default: ~/.cache/hotpath/symbols, HOTPATH_SYMBOL_CACHE). */
  cacheDir?: string | false;
}

interface RawTable {
  list: SymbolList;
  error?: 'nm-missing' | 'nm-failed';
}

function defaultCacheDir(): string | false {
  const env = process.env.HOTPATH_SYMBOL_CACHE;
  if (env === '0' || env === 'off') return false;
  if (env) return env;
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'hotpath', 'symbols');
}

const CACHE_VERSION = 1;

function cacheFile(dir: string, path: string, st: { size: number; mtimeMs: number; ino: number }): string {
  const key = createHash('sha1').update(`${CACHE_VERSION}\0${path}\0${st.size}\0${st.mtimeMs}\0${st.ino}`).digest('hex');
  return join(dir, `${key}.sym`);
}

/** Cache file: a JSON header line, then starts and sizes as float64, then the names joined by newlines. */
function readCache(file: string): RawSymbol[] | undefined {
  try {
    const buf = readFileSync(file);
    const nl = buf.indexOf(10);
    const head = JSON.parse(buf.subarray(0, nl).toString('utf8')) as { v: number; count: number };
    if (head.v !== CACHE_VERSION) return undefined;
    const n = head.count;
    const numbers = new Float64Array(buf.buffer.slice(buf.byteOffset + nl + 1, buf.byteOffset + nl + 1 + n * 16));
    const names = buf
      .subarray(nl + 1 + n * 16)
      .toString('utf8')
      .split('\n');
    if (names.length !== n) return undefined;
    const out: RawSymbol[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = { start: numbers[i], size: numbers[n + i], name: names[i] };
    return out;
  } catch {
    return undefined;
  }
}

function writeCache(file: string, dir: string, raw: RawSymbol[]): void {
  try {
    mkdirSync(dir, { recursive: true });
    const n = raw.length;
    const numbers = new Float64Array(n * 2);
    for (let i = 0; i < n; i++) {
      numbers[i] = raw[i].start;
      numbers[n + i] = raw[i].size;
    }
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(
      tmp,
      Buffer.concat([
        Buffer.from(JSON.stringify({ v: CACHE_VERSION, count: n }) + '\n'),
        Buffer.from(numbers.buffer),
        Buffer.from(raw.map((r) => r.name).join('\n')),
      ]),
    );
    renameSync(tmp, file);
  } catch {
    // A cache that cannot be written only costs the next run an nm.
  }
}

async function symbolTable(
  nm: string,
  path: string,
  st: { size: number; mtimeMs: number; ino: number },
  cacheDir: string | false,
): Promise<RawTable> {
  // The symbol table read in process first (no child process); nm for what it cannot read.
  const elf = readElfFunctionSymbols(path);
  if (elf && elf.count > 0) return { list: elf };
  const file = cacheDir ? cacheFile(cacheDir, path, st) : undefined;
  const cached = file ? readCache(file) : undefined;
  if (cached) return { list: listOf(cached) };
  const raw: RawSymbol[] = [];
  const plain = await runNm(nm, ['-n', '-S', path]);
  if (plain.error?.code === 'ENOENT') return { list: listOf(raw), error: 'nm-missing' };
  parseNmOutput(plain.out, raw);
  if (raw.length === 0) {
    const dynamic = await runNm(nm, ['-n', '-S', '-D', path]);
    parseNmOutput(dynamic.out, raw);
    if (raw.length === 0 && plain.code !== 0 && dynamic.code !== 0) return { list: listOf(raw), error: 'nm-failed' };
  }
  if (file && cacheDir) writeCache(file, cacheDir, raw);
  return { list: listOf(raw) };
}

/** Reads the symbols of the libraries (those given; pass only those with ticks), concurrently. */
export async function symbolizeLibraries(libs: readonly LibraryRange[], options: SymbolizeOptions = {}): Promise<LibrarySymbols[]> {
  const nm = options.nm ?? 'nm';
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  return Promise.all(
    libs.map(async (lib): Promise<LibrarySymbols> => {
      const base = { path: lib.path, start: lib.start, end: lib.end, slide: 0, ...emptyTable };
      if (lib.path.startsWith('['))
        return { ...base, status: 'pseudo', reason: `${lib.path} is a kernel-provided page with no file to read symbols from` };
      let st: { size: number; mtimeMs: number; ino: number };
      try {
        st = statSync(lib.path);
      } catch {
        return { ...base, status: 'missing', reason: `${lib.path} is gone (deleted, or the log was written on another machine)` };
      }
      const type = elfType(lib.path);
      if (type === undefined) return { ...base, status: 'no-symbols', reason: `${lib.path} is not an ELF file` };
      const slide = (type === 'dyn' ? lib.start : 0) + lib.aslrSlide;
      const { list, error } = await symbolTable(nm, lib.path, st, cacheDir);
      if (error === 'nm-missing')
        return {
          ...base,
          slide,
          status: 'nm-missing',
          reason: `${nm} is not installed (Debian/Ubuntu: apt-get install binutils), so C++ symbols cannot be read`,
        };
      if (error === 'nm-failed') return { ...base, slide, status: 'nm-failed', reason: `${nm} could not read ${lib.path}` };
      if (list.count === 0) return { ...base, slide, status: 'no-symbols', reason: `${lib.path} is stripped (no symbol table)` };
      const t = table(list, slide, lib.start, lib.end);
      const result: LibrarySymbols = { ...base, slide, status: 'ok', ...t };
      const check = checkBuiltins(result, options.builtins ?? []);
      if (check === 'mismatch') {
        return {
          ...base,
          slide,
          status: 'mismatch',
          reason: `${lib.path} is not the binary that wrote the log: V8's builtins are at other addresses in it (was node upgraded or rebuilt since?)`,
        };
      }
      if (options.logMtimeMs !== undefined && st.mtimeMs > options.logMtimeMs + 1000 && check !== 'match') {
        result.warning = `${lib.path} changed after the log was written; its C++ names may be wrong`;
      }
      return result;
    }),
  );
}

/** Demangles C++ names (`_ZN2v88internal…`) with one c++filt; names it cannot read stay as they are. */
export function demangle(names: readonly string[], cxxfilt = 'c++filt', args: readonly string[] = []): Promise<string[]> {
  if (names.length === 0) return Promise.resolve([]);
  return new Promise((resolve) => {
    const child = spawn(cxxfilt, [...args], { stdio: ['pipe', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', () => resolve([...names]));
    child.on('close', () => {
      const out = Buffer.concat(chunks).toString('utf8').split('\n');
      resolve(out.length >= names.length ? names.map((n, i) => out[i] || n) : [...names]);
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(names.join('\n') + '\n');
  });
}

/**
 * Compares the log's builtin addresses with the binary's `Builtins_<name>` symbols. Each is
 * first looked up at the log's address (a few dozen names read); only when most are not there
 * are all the binary's names read to find where its builtins are.
 */
function checkBuiltins(lib: LibrarySymbols, builtins: readonly { name: string; start: number }[]): 'match' | 'mismatch' | 'unknown' {
  const inside = builtins.filter((b) => b.start >= lib.start && b.start < lib.end);
  if (inside.length === 0) return 'unknown';
  const atTheirPlace = inside.filter((b) => {
    const k = findSymbol(lib, b.start);
    return k >= 0 && lib.starts[k] === b.start && lib.name(k) === `Builtins_${b.name}`;
  }).length;
  // Those not at their place could at most all be elsewhere: still no more than those that are.
  if (atTheirPlace > 0 && inside.length - atTheirPlace <= atTheirPlace) return 'match';
  const byName = new Map<string, number>();
  for (let i = 0; i < lib.starts.length; i++) {
    const name = lib.name(i);
    if (name.startsWith('Builtins_')) byName.set(name.slice(9), lib.starts[i]);
  }
  if (byName.size === 0) return 'unknown';
  let same = 0;
  let differ = 0;
  for (const b of inside) {
    const at = byName.get(b.name);
    if (at === undefined) continue;
    if (at === b.start) same++;
    else differ++;
  }
  if (same + differ === 0) return 'unknown';
  return differ > same ? 'mismatch' : 'match';
}

/** Index of the symbol holding `addr` in a library's table, or -1. */
export function findSymbol(lib: LibrarySymbols, addr: number): number {
  const s = lib.starts;
  let lo = 0;
  let hi = s.length - 1;
  if (hi < 0 || addr < s[0]) return -1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (s[mid] <= addr) lo = mid;
    else hi = mid - 1;
  }
  return addr < lib.ends[lo] ? lo : -1;
}
