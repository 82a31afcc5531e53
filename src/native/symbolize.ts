// C++ symbols of the node binary and the shared libraries a tick log names: the ELF symbol
// table read in process (elf-symbols.ts; the dynamic one when a library is stripped), else
// `nm -n -S` (`-D` for a stripped library), for the libraries with ticks, all at once, cached per file (path, size, mtime, inode) under
// ~/.cache/hotpath/symbols so the next log of the same binary needs no nm. Names stay mangled
// here; the few that ticks use are demangled at the end with one `c++filt` (demangle()). Function symbols only (t, T, w, W), as V8's own
// tick processor takes them. An executable (ET_EXEC) holds absolute addresses; a shared
// object or PIE (ET_DYN) is relocated by its load address from the log.
//
// Every library ends with a status: `ok`, or why its ticks stay unnamed (the file is gone,
// nm is missing, the file is not the binary that wrote the log), which the output reports.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { openSync, readSync, closeSync, statSync, mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { LibraryRange } from './tick-log.js';
import { readElfFunctionSymbols } from './elf-symbols.js';

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
  names: string[];
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

const emptyTable = { starts: new Float64Array(0), ends: new Float64Array(0), names: [] as string[] };

/** Symbols by start, and at one start the sized one first. */
const bySymbolOrder = (x: RawSymbol, y: RawSymbol) => x.start - y.start || y.size - x.size;

/**
 * Puts `raw` in symbol order. `nm -n` already lists by address: then only the runs of aliases at
 * one address are ordered, a few symbols each. A full sort of the node binary's ~86,000 symbols
 * with a JS comparator costs ~0.4 s on the cold path (the comparator still interpreted), most of
 * `hotpath prof`'s own time on a warm symbol cache.
 */
function sortSymbols(raw: RawSymbol[]): void {
  for (let i = 1; i < raw.length; i++) {
    if (raw[i].start < raw[i - 1].start) {
      raw.sort(bySymbolOrder);
      return;
    }
  }
  for (let i = 0; i < raw.length;) {
    let j = i + 1;
    while (j < raw.length && raw[j].start === raw[i].start) j++;
    if (j - i > 1) {
      const run = raw.slice(i, j).sort(bySymbolOrder);
      for (let k = 0; k < run.length; k++) raw[i + k] = run[k];
    }
    i = j;
  }
}

function table(raw: RawSymbol[], slide: number, lo: number, hi: number): Pick<LibrarySymbols, 'starts' | 'ends' | 'names'> {
  sortSymbols(raw);
  const starts: number[] = [];
  const ends: number[] = [];
  const names: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const s = raw[i];
    const start = s.start + slide;
    if (starts.length > 0 && starts[starts.length - 1] === start) continue; // aliases: the first (sized, static) name wins
    let end = s.size > 0 ? start + s.size : 0;
    if (end === 0) {
      // Without a size, a symbol runs to the next one.
      let j = i + 1;
      while (j < raw.length && raw[j].start === s.start) j++;
      end = j < raw.length ? raw[j].start + slide : hi;
    }
    if (start < lo || start >= hi) continue;
    starts.push(start);
    ends.push(Math.min(end, hi));
    names.push(s.name);
  }
  return { starts: Float64Array.from(starts), ends: Float64Array.from(ends), names };
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
  raw: RawSymbol[];
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
  const file = cacheDir ? cacheFile(cacheDir, path, st) : undefined;
  const cached = file ? readCache(file) : undefined;
  if (cached) return { raw: cached };
  // The symbol table read in process first (no child process); nm for what it cannot read.
  const elf = readElfFunctionSymbols(path);
  if (elf && elf.length > 0) {
    if (file && cacheDir) writeCache(file, cacheDir, elf);
    return { raw: elf };
  }
  const raw: RawSymbol[] = [];
  const plain = await runNm(nm, ['-n', '-S', path]);
  if (plain.error?.code === 'ENOENT') return { raw, error: 'nm-missing' };
  parseNmOutput(plain.out, raw);
  if (raw.length === 0) {
    const dynamic = await runNm(nm, ['-n', '-S', '-D', path]);
    parseNmOutput(dynamic.out, raw);
    if (raw.length === 0 && plain.code !== 0 && dynamic.code !== 0) return { raw, error: 'nm-failed' };
  }
  if (file && cacheDir) writeCache(file, cacheDir, raw);
  return { raw };
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
      const { raw, error } = await symbolTable(nm, lib.path, st, cacheDir);
      if (error === 'nm-missing')
        return {
          ...base,
          slide,
          status: 'nm-missing',
          reason: `${nm} is not installed (Debian/Ubuntu: apt-get install binutils), so C++ symbols cannot be read`,
        };
      if (error === 'nm-failed') return { ...base, slide, status: 'nm-failed', reason: `${nm} could not read ${lib.path}` };
      if (raw.length === 0) return { ...base, slide, status: 'no-symbols', reason: `${lib.path} is stripped (no symbol table)` };
      const t = table([...raw], slide, lib.start, lib.end);
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
export function demangle(names: readonly string[], cxxfilt = 'c++filt'): Promise<string[]> {
  if (names.length === 0) return Promise.resolve([]);
  return new Promise((resolve) => {
    const child = spawn(cxxfilt, [], { stdio: ['pipe', 'pipe', 'ignore'] });
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

/** Compares the log's builtin addresses with the binary's `Builtins_<name>` symbols. */
function checkBuiltins(lib: LibrarySymbols, builtins: readonly { name: string; start: number }[]): 'match' | 'mismatch' | 'unknown' {
  const inside = builtins.filter((b) => b.start >= lib.start && b.start < lib.end);
  if (inside.length === 0) return 'unknown';
  const byName = new Map<string, number>();
  for (let i = 0; i < lib.names.length; i++) if (lib.names[i].startsWith('Builtins_')) byName.set(lib.names[i].slice(9), lib.starts[i]);
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
