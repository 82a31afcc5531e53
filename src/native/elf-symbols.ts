// Function symbols of an ELF64 little-endian file (x86-64, arm64 Linux), read in process: the
// section headers, then `.symtab` (or `.dynsym` when the file is stripped) and its string table,
// at their offsets, never the whole file. What `nm -n -S` lists for types t/T/w/W (STT_FUNC and
// STT_GNU_IFUNC excluded as nm's `i`), without nm's process. Returns undefined for anything it
// does not read (another ELF class or byte order, a damaged file): symbolize.ts then runs nm.
//
// The node binary holds ~100,000 function symbols and ~7 MB of (mangled) names, of which a
// tick log uses a few hundred: addresses and sizes go into typed arrays and a name is decoded
// from the string table only when it is asked for (an object and a string per symbol would
// cost more than the rest of `hotpath prof` together, most of it in the garbage collector).

import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';

/** Symbols in the order of the file (unsorted); `name(i)` decodes the i-th name on demand. */
export interface SymbolList {
  count: number;
  starts: Float64Array;
  sizes: Float64Array;
  name(i: number): string;
}

const SHT_SYMTAB = 2;
const SHT_DYNSYM = 11;
const STT_FUNC = 2;
const STT_NOTYPE = 0;
const SHF_EXECINSTR = 0x4;
const SYM_SIZE = 24;

/** `length` bytes at `offset`, in a buffer of their own (offset 0 of its memory: 32-bit views fit). */
function readAt(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.from(new ArrayBuffer(length));
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, offset + done);
    if (n <= 0) throw new Error('short read');
    done += n;
  }
  return buf;
}

/** A 64-bit field read as two 32-bit halves: addresses and sizes fit in 53 bits (BigInt reads are slow). */
const u64 = (b: Buffer, o: number): number => b.readUInt32LE(o) + b.readUInt32LE(o + 4) * 4294967296;

export function readElfFunctionSymbols(path: string): SymbolList | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const eh = readAt(fd, 0, 64);
    if (eh.readUInt32LE(0) !== 0x464c457f || eh[4] !== 2 /* ELFCLASS64 */ || eh[5] !== 1 /* little endian */) return undefined;
    const shoff = u64(eh, 40);
    const shentsize = eh.readUInt16LE(58);
    const shnum = eh.readUInt16LE(60);
    if (shoff === 0 || shnum === 0 || shentsize < 64) return undefined;
    const sh = readAt(fd, shoff, shentsize * shnum);
    const section = (i: number) => {
      const o = i * shentsize;
      return {
        type: sh.readUInt32LE(o + 4),
        offset: u64(sh, o + 24),
        size: u64(sh, o + 32),
        link: sh.readUInt32LE(o + 40),
        entsize: u64(sh, o + 56),
      };
    };
    let table: ReturnType<typeof section> | undefined;
    for (const wanted of [SHT_SYMTAB, SHT_DYNSYM]) {
      for (let i = 0; i < shnum && !table; i++) {
        const s = section(i);
        if (s.type === wanted && s.size > 0) table = s;
      }
      if (table) break;
    }
    if (!table || table.entsize < SYM_SIZE) return { count: 0, starts: new Float64Array(0), sizes: new Float64Array(0), name: () => '' };
    if (endianness() !== 'LE' || table.entsize % 4 !== 0) return undefined; // read by nm instead
    const exec = new Uint8Array(shnum);
    for (let i = 0; i < shnum; i++) exec[i] = sh.readUInt32LE(i * shentsize + 8) & SHF_EXECINSTR ? 1 : 0;
    const strtab = section(table.link);
    const strings = readAt(fd, strtab.offset, strtab.size);
    const syms = readAt(fd, table.offset, table.size);
    const step = table.entsize;
    const most = Math.floor(syms.length / step);
    const starts = new Float64Array(most);
    const sizes = new Float64Array(most);
    const nameAt = new Uint32Array(most);
    // The entries' 32-bit words in place (the host is little-endian, as the file): no call per field.
    const words = new Uint32Array(syms.buffer, 0, syms.length >> 2);
    const step4 = step >> 2;
    const strLen = strings.length;
    let count = 0;
    for (let o = 0, w = 0; o + SYM_SIZE <= syms.length; o += step, w += step4) {
      const type = syms[o + 4] & 0xf;
      const shndx = syms[o + 6] | (syms[o + 7] << 8);
      if (shndx === 0 || shndx >= 0xff00) continue; // undefined (imported), absolute or common
      // Functions, and untyped labels in code (assembly: V8's Builtins_*), as nm's t/T/w/W.
      if (type !== STT_FUNC && !(type === STT_NOTYPE && exec[shndx] === 1)) continue;
      // Addresses and sizes fit in 53 bits: two 32-bit halves.
      const start = words[w + 2] + words[w + 3] * 4294967296;
      if (start === 0) continue;
      const nameOff = words[w];
      if (nameOff >= strLen || strings[nameOff] === 0) continue; // no name
      starts[count] = start;
      sizes[count] = words[w + 4] + words[w + 5] * 4294967296;
      nameAt[count] = nameOff;
      count++;
    }
    return {
      count,
      starts: starts.subarray(0, count),
      sizes: sizes.subarray(0, count),
      name(i: number): string {
        const from = nameAt[i];
        const end = strings.indexOf(0, from);
        return strings.toString('latin1', from, end < 0 ? strings.length : end);
      },
    };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
