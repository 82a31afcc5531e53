// Names every frame of every tick: JIT code from the log's code map (already resolved while
// reading, at the moment of the tick), then C++ symbols of the libraries (symbolize.ts), then
// the library itself when no symbol covers the address. What stays unnamed is counted by
// reason, so the output can say which ticks could not be resolved and why.

import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { hotpathError } from '../errors.js';
import { parseTickLog, type DynamicCode, type TickLog } from './tick-log.js';
import { demangle, findSymbol, symbolizeLibraries, type LibrarySymbols, type SymbolizeOptions } from './symbolize.js';
import { staticAddresses, type StaticAddresses } from './static-addresses.js';

/** V8's grouping in `--prof-process`: JS-side code, C++ symbols, whole libraries. */
export type EntryType = 'JS' | 'CODE' | 'CPP' | 'SHARED_LIB';

export interface ProfEntry {
  /** The name `node --prof-process` prints: `JS: *fib /app/server.js:3:13`, `Builtin: X`, a C++ symbol, a library path. */
  name: string;
  type: EntryType;
  /** The code object, for JIT code. */
  code?: DynamicCode;
  /** The library a C++ symbol or library entry lies in. */
  library?: string;
}

export interface UnresolvedReason {
  reason: string;
  /** Ticks whose top frame (the pc) is unnamed for this reason. */
  ticks: number;
}

export interface ResolvedTicks {
  file: string;
  v8Version?: string;
  /** The pid in the file name (`isolate-0x…-<pid>-v8.log`), else 0. */
  pid: number;
  entries: ProfEntry[];
  times: number[];
  states: number[];
  frameStart: number[];
  /** Entry index per frame, top first; -1 for an address nothing names. */
  frames: Int32Array;
  unresolved: UnresolvedReason[];
  libraries: Pick<LibrarySymbols, 'path' | 'status' | 'reason' | 'warning'>[];
  warnings: string[];
  /** Last deopt reason per function code id (for the profile's nodes). */
  deoptReasons: Map<number, string>;
  /** Deopts per function name (as printed), most first. */
  deopts: { name: string; count: number; lastReason: string }[];
}

/** V8 VM states (src/execution/vm-state.h; IDLE has been 8 since V8 7). */
export const VM_STATE = {
  JS: 0,
  GC: 1,
  PARSER: 2,
  BYTECODE_COMPILER: 3,
  COMPILER: 4,
  OTHER: 5,
  EXTERNAL: 6,
  ATOMICS_WAIT: 7,
  IDLE: 8,
} as const;

/** `fib /app/x.js:3:13` as V8's tick processor prints a function's name. */
export function functionDisplayName(name: string): string {
  if (name.length === 0) return '<anonymous>';
  return name[0] === ' ' ? `<anonymous>${name}` : name;
}

function codeEntry(code: DynamicCode): ProfEntry {
  const name = code.isFunction ? `${code.type}: ${code.state}${functionDisplayName(code.name)}` : `${code.type}: ${code.name}`;
  return { name, type: code.isFunction ? 'JS' : 'CODE', code };
}

export function pidOfLogName(file: string): number {
  const m = /isolate-0x[0-9a-f]+-(\d+)(?:-\d+)?-v8\.log$/i.exec(file);
  return m ? Number(m[1]) : 0;
}

export async function readTickLog(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw hotpathError('HOTPATH_ERR_TICK_LOG', `Cannot read the tick log ${file}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`, {
      cause: err,
      details: { file },
    });
  }
}

/** Reads, parses and resolves one tick log. */
export async function processTickLog(file: string, options: SymbolizeOptions = {}): Promise<ResolvedTicks> {
  const text = await readTickLog(file);
  const log = parseTickLog(text, file);
  let mtime: number | undefined;
  try {
    mtime = statSync(file).mtimeMs;
  } catch {
    mtime = undefined;
  }
  // Only the libraries some frame falls in are read (nm costs more than the rest together).
  const statics = staticAddresses(log.frames);
  const libsList = log.libraries;
  const usedLib = new Uint8Array(libsList.length);
  for (const v of statics.addresses) {
    for (let i = 0; i < libsList.length; i++)
      if (v >= libsList[i].start && v < libsList[i].end) {
        usedLib[i] = 1;
        break;
      }
  }
  const used = libsList.filter((_, i) => usedLib[i] === 1);
  const libs = await symbolizeLibraries(used, { ...options, logMtimeMs: options.logMtimeMs ?? mtime, builtins: log.builtins });
  const resolved = resolveTicks(log, libs, statics);
  const mangled = resolved.entries.filter((e) => e.type === 'CPP' && e.name.startsWith('_Z'));
  const names = await demangle(mangled.map((e) => e.name));
  mangled.forEach((e, i) => {
    e.name = names[i];
  });
  return resolved;
}

/** Names every frame; `statics` are the log's native addresses when the caller has them already. */
export function resolveTicks(
  log: TickLog,
  libs: readonly LibrarySymbols[],
  statics: StaticAddresses = staticAddresses(log.frames),
): ResolvedTicks {
  const entries: ProfEntry[] = log.codes.map(codeEntry);
  const symbolEntry = new Map<string, number>(); // `lib#index` → entry
  const libEntry = new Map<string, number>();
  const unresolvedWhy = new Map<string, number>();
  const byStart = [...libs].sort((a, b) => a.start - b.start);
  const libOf = (addr: number): LibrarySymbols | undefined => {
    // Several ranges may hold an address (a library mapped twice): the narrowest wins.
    let best: LibrarySymbols | undefined;
    for (const l of byStart) {
      if (l.start > addr) break;
      if (addr < l.end && (!best || l.end - l.start < best.end - best.start)) best = l;
    }
    return best;
  };
  const whyUnresolved = (addr: number): string => {
    const lib = libOf(addr);
    if (lib && lib.status !== 'ok') return lib.reason ?? `${lib.path}: no symbols`;
    return 'the address is in no code the log describes (JIT code created before logging began or after it was freed, or a library loaded later)';
  };
  const blob = findRemappedBlob(log, libOf, statics);
  const resolveStatic = (addr: number): number => {
    if (blob && addr >= blob.base && addr < blob.base + blob.length) {
      const id = blob.find(addr - blob.base + blob.start);
      if (id >= 0) return id;
    }
    let id = -1;
    const lib = libOf(addr);
    if (lib && lib.status === 'ok') {
      const k = findSymbol(lib, addr);
      if (k >= 0) {
        const key = `${lib.path}#${k}`;
        id = symbolEntry.get(key) ?? -1;
        if (id < 0) {
          id = entries.length;
          entries.push({ name: lib.name(k), type: 'CPP', library: lib.path });
          symbolEntry.set(key, id);
        }
      }
    }
    if (id < 0 && lib && (lib.status === 'ok' || lib.status === 'pseudo' || lib.status === 'no-symbols')) {
      // V8 counts a tick in a library without a symbol for it under the library itself.
      id = libEntry.get(lib.path) ?? -1;
      if (id < 0) {
        id = entries.length;
        entries.push({ name: lib.path, type: 'SHARED_LIB', library: lib.path });
        libEntry.set(lib.path, id);
      }
    }
    return id;
  };
  // Each distinct address is looked up once, in the order the frames first name it.
  const { addresses, frameIndex } = statics;
  const staticIds = new Int32Array(addresses.length);
  for (let k = 0; k < addresses.length; k++) staticIds[k] = resolveStatic(addresses[k]);
  const raw = log.frames;
  const frames = new Int32Array(raw.length);
  const starts = log.frameStart;
  for (let i = 0; i < raw.length; i++) {
    const v = raw[i];
    frames[i] = v < 0 ? -v - 1 : v === 0 ? -1 : staticIds[frameIndex[i]];
  }
  // The top frames left unnamed, by reason.
  for (let t = 0; t + 1 < starts.length; t++) {
    const i = starts[t];
    if (i < starts[t + 1] && frames[i] < 0) {
      const v = raw[i];
      const why = v === 0 ? 'V8 gave no program counter' : whyUnresolved(v);
      unresolvedWhy.set(why, (unresolvedWhy.get(why) ?? 0) + 1);
    }
  }
  const warnings: string[] = [];
  if (log.truncated)
    warnings.push(
      `${log.file} ends in the middle of a line: the log was cut short (the process killed, or an incomplete copy); the ${log.times.length} complete ticks before the cut are used`,
    );
  if (log.badLines > 0) {
    const first = log.firstBadLine;
    const which = first ? ` (the first, line ${first.line}: ${JSON.stringify(first.text)})` : '';
    warnings.push(`${log.file}: ${log.badLines} malformed line(s) skipped${which}`);
  }
  for (const l of libs) if (l.warning) warnings.push(l.warning);
  const deoptReasons = new Map<number, string>();
  const deoptCounts = new Map<string, { count: number; lastReason: string }>();
  for (const d of log.deopts) {
    deoptReasons.set(d.codeId, d.reason);
    const name = functionDisplayName(log.codes[d.codeId].name);
    const rec = deoptCounts.get(name) ?? { count: 0, lastReason: '' };
    rec.count++;
    rec.lastReason = d.reason;
    deoptCounts.set(name, rec);
  }
  return {
    file: log.file,
    v8Version: log.v8Version,
    pid: pidOfLogName(log.file),
    entries,
    times: log.times,
    states: log.states,
    frameStart: log.frameStart,
    frames,
    unresolved: [...unresolvedWhy].map(([reason, ticks]) => ({ reason, ticks })).sort((a, b) => b.ticks - a.ticks),
    libraries: libs.map((l) => ({
      path: l.path,
      status: l.status,
      ...(l.reason ? { reason: l.reason } : {}),
      ...(l.warning ? { warning: l.warning } : {}),
    })),
    warnings,
    deoptReasons,
    deopts: [...deoptCounts].map(([name, r]) => ({ name, ...r })).sort((a, b) => b.count - a.count),
  };
}

interface RemappedBlob {
  base: number;
  start: number;
  length: number;
  find(addr: number): number;
}

/**
 * V8 11 (Node 20) copies its embedded builtins next to the JIT code range (short builtin
 * calls) after it has logged them at their place in the binary, so ticks in the copy match
 * no logged code. V8 places the copy at the end of the first S bytes of the code range,
 * rounded to its allocation page A; of the usual S and A, the placement that holds the most
 * otherwise unnamed program counters wins. Later V8s log the copy's own addresses.
 */
export function findRemappedBlob(
  log: TickLog,
  libOf: (addr: number) => unknown,
  statics: StaticAddresses = staticAddresses(log.frames),
): RemappedBlob | undefined {
  if (log.codeRange === undefined || log.blobCodes.length === 0) return undefined;
  const codes = [...log.blobCodes].sort((a, b) => a.start - b.start);
  const start = codes[0].start;
  if (!libOf(start)) return undefined; // logged at the copy already
  let end = start;
  for (const c of codes) end = Math.max(end, c.start + c.size);
  const length = end - start;
  // The program counters no library holds, each distinct one with how many ticks it is the pc of.
  const { addresses, frameIndex } = statics;
  const pcTicks = new Int32Array(addresses.length);
  for (let t = 0; t + 1 < log.frameStart.length; t++) {
    const k = frameIndex[log.frameStart[t]];
    if (k >= 0 && log.frameStart[t + 1] > log.frameStart[t]) pcTicks[k]++;
  }
  const unknown: number[] = [];
  const weight: number[] = [];
  for (let k = 0; k < addresses.length; k++) {
    const v = addresses[k];
    if (pcTicks[k] > 0 && v > log.codeRange && !libOf(v)) {
      unknown.push(v);
      weight.push(pcTicks[k]);
    }
  }
  if (unknown.length === 0) return undefined;
  let best: { base: number; hits: number } | undefined;
  for (const mb of [128, 256, 512, 1024, 2048, 4096]) {
    for (const page of [4096, 65536, 262144, 2097152]) {
      const base = log.codeRange + mb * 1048576 - Math.ceil(length / page) * page;
      let hits = 0;
      for (let i = 0; i < unknown.length; i++) if (unknown[i] >= base && unknown[i] < base + length) hits += weight[i];
      if (hits > 0 && (!best || hits > best.hits)) best = { base, hits };
    }
  }
  if (!best) return undefined;
  const starts = codes.map((c) => c.start);
  return {
    base: best.base,
    start,
    length,
    find(addr: number): number {
      let lo = 0;
      let hi = starts.length - 1;
      if (addr < starts[0]) return -1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (starts[mid] <= addr) lo = mid;
        else hi = mid - 1;
      }
      return addr < codes[lo].start + codes[lo].size ? codes[lo].id : -1;
    },
  };
}
