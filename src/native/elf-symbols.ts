// Function symbols of an ELF64 little-endian file (x86-64, arm64 Linux), read in process: the
// section headers, then `.symtab` (or `.dynsym` when the file is stripped) and its string table,
// at their offsets, never the whole file. What `nm -n -S` lists for types t/T/w/W (STT_FUNC and
// STT_GNU_IFUNC excluded as nm's `i`), without nm's process. Returns undefined for anything it
// does not read (another ELF class or byte order, a damaged file): symbolize.ts then runs nm.

import { closeSync, openSync, readSync } from 'node:fs';

export interface ElfSymbol {
  start: number;
  size: number;
  name: string;
}

const SHT_SYMTAB = 2;
const SHT_DYNSYM = 11;
const STT_FUNC = 2;
const STT_NOTYPE = 0;
const SHF_EXECINSTR = 0x4;

function readAt(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, offset + done);
    if (n <= 0) throw new Error('short read');
    done += n;
  }
  return buf;
}

export function readElfFunctionSymbols(path: string): ElfSymbol[] | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const eh = readAt(fd, 0, 64);
    if (eh.readUInt32LE(0) !== 0x464c457f || eh[4] !== 2 /* ELFCLASS64 */ || eh[5] !== 1 /* little endian */) return undefined;
    const shoff = Number(eh.readBigUInt64LE(40));
    const shentsize = eh.readUInt16LE(58);
    const shnum = eh.readUInt16LE(60);
    if (shoff === 0 || shnum === 0 || shentsize < 64) return undefined;
    const sh = readAt(fd, shoff, shentsize * shnum);
    const section = (i: number) => {
      const o = i * shentsize;
      return {
        type: sh.readUInt32LE(o + 4),
        flags: Number(sh.readBigUInt64LE(o + 8)),
        offset: Number(sh.readBigUInt64LE(o + 24)),
        size: Number(sh.readBigUInt64LE(o + 32)),
        link: sh.readUInt32LE(o + 40),
        entsize: Number(sh.readBigUInt64LE(o + 56)),
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
    if (!table || table.entsize < 24) return [];
    const exec: boolean[] = [];
    for (let i = 0; i < shnum; i++) exec.push((Number(sh.readBigUInt64LE(i * shentsize + 8)) & SHF_EXECINSTR) !== 0);
    const strtab = section(table.link);
    const strings = readAt(fd, strtab.offset, strtab.size);
    const syms = readAt(fd, table.offset, table.size);
    const out: ElfSymbol[] = [];
    for (let o = 0; o + 24 <= syms.length; o += table.entsize) {
      const type = syms[o + 4] & 0xf;
      const shndx = syms.readUInt16LE(o + 6);
      if (shndx === 0 || shndx >= 0xff00) continue; // undefined (imported), absolute or common
      // Functions, and untyped labels in code (assembly: V8's Builtins_*), as nm's t/T/w/W.
      if (type !== STT_FUNC && !(type === STT_NOTYPE && exec[shndx] === true)) continue;
      // Addresses and sizes fit in 53 bits: read as two 32-bit halves (BigInt reads are slow).
      const start = syms.readUInt32LE(o + 8) + syms.readUInt32LE(o + 12) * 4294967296;
      if (start === 0) continue;
      const nameOff = syms.readUInt32LE(o);
      let end = nameOff;
      while (end < strings.length && strings[end] !== 0) end++;
      const name = strings.toString('latin1', nameOff, end);
      if (name === '') continue;
      out.push({ start, size: syms.readUInt32LE(o + 16) + syms.readUInt32LE(o + 20) * 4294967296, name });
    }
    return out;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
