// The in-process ELF symbol reader against binutils' nm on the same files (the node binary
// that runs the tests, and libc, whose table is the dynamic one), and the symbol table built
// from it against a table built the plain way from nm's listing: the same name at every address.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { readElfFunctionSymbols } from '../../src/native/elf-symbols.js';
import { findSymbol, parseNmOutput, symbolizeLibraries } from '../../src/native/symbolize.js';

const hasNm = spawnSync('nm', ['--version']).status === 0;

function nmSymbols(path: string): { start: number; size: number; name: string }[] {
  const raw: { start: number; size: number; name: string }[] = [];
  for (const args of [
    ['-n', '-S', path],
    ['-n', '-S', '-D', path],
  ]) {
    if (raw.length > 0) break;
    const r = spawnSync('nm', args, { encoding: 'utf8', maxBuffer: 1 << 30 });
    parseNmOutput(r.stdout, raw);
  }
  // nm -D prints ELF versions (`read@@GLIBC_2.2.5`); the reader gives the bare name.
  return raw.map((s) => ({ ...s, name: s.name.replace(/@.*$/, '') }));
}

/** A shared library this process has mapped (libc, or the first .so found). */
function aLibrary(): { path: string; start: number; end: number } | undefined {
  const maps = readFileSync('/proc/self/maps', 'utf8').split('\n');
  const so = maps.map((l) => l.split(/\s+/)).filter((f) => f[5]?.includes('.so'));
  const path = (so.find((f) => /\/libc[.-]/.test(f[5])) ?? so[0])?.[5];
  if (!path) return undefined;
  const own = so.filter((f) => f[5] === path).map((f) => f[0].split('-').map((x) => parseInt(x, 16)));
  return { path, start: Math.min(...own.map((r) => r[0])), end: Math.max(...own.map((r) => r[1])) };
}

/** Index of the last entry starting at or before `addr`, or -1. */
function lastAtOrBefore(xs: readonly { start: number }[], addr: number): number {
  let lo = -1;
  let hi = xs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (xs[mid].start <= addr) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

test('the ELF reader lists the function symbols nm lists, with their sizes and names', { skip: !hasNm && 'nm is not installed' }, () => {
  const lib = aLibrary();
  for (const path of [process.execPath, ...(lib ? [lib.path] : [])]) {
    const list = readElfFunctionSymbols(path);
    assert.ok(list, `${path} read`);
    const theirs = new Set(nmSymbols(path).map((s) => `${s.start} ${s.size} ${s.name}`));
    const ours: string[] = [];
    for (let i = 0; i < list.count; i++) ours.push(`${list.starts[i]} ${list.sizes[i]} ${list.name(i)}`);
    assert.ok(ours.length > 100, `${path}: ${ours.length} symbols`);
    const extra = ours.filter((k) => !theirs.has(k));
    assert.deepEqual(extra.slice(0, 5), [], `${path}: symbols nm does not list`);
    // nm also lists a few data labels in code sections (lookup tables in assembly); nothing more.
    assert.ok(theirs.size - ours.length <= Math.max(20, theirs.size * 0.001), `${path}: ${ours.length} of nm's ${theirs.size}`);
  }
});

test('the symbol table names every address as the plain table from nm does', { skip: !hasNm && 'nm is not installed' }, async () => {
  // The node binary is an executable (absolute addresses) on Debian, a PIE elsewhere; a
  // library is relocated by its load address. Both are checked at their addresses in this process.
  const lib = aLibrary();
  const exe = readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .map((l) => l.split(/\s+/))
    .filter((f) => f[5] === process.execPath)
    .map((f) => f[0].split('-').map((x) => parseInt(x, 16)));
  const ranges = [
    { path: process.execPath, start: Math.min(...exe.map((r) => r[0])), end: Math.max(...exe.map((r) => r[1])), aslrSlide: 0 },
    ...(lib ? [{ ...lib, aslrSlide: 0 }] : []),
  ];
  const tables = await symbolizeLibraries(ranges, { cacheDir: false });
  for (const table of tables) {
    assert.equal(table.status, 'ok', `${table.path}: ${table.reason}`);
    const head = Buffer.alloc(18);
    const fd = openSync(table.path, 'r');
    readSync(fd, head, 0, 18, 0);
    closeSync(fd);
    const slide = head.readUInt16LE(16) === 3 ? table.start : 0; // ET_DYN: relative addresses
    // The plain table: by address, the largest of aliases first (then the first listed), and a
    // symbol without a size running to the next address.
    const raw = nmSymbols(table.path)
      .map((s, i) => ({ ...s, i }))
      .sort((a, b) => a.start - b.start || b.size - a.size || a.i - b.i);
    // Of aliases of the same size, which comes first depends on the listing's order: any of them.
    const plain: { start: number; end: number; names: string[] }[] = [];
    for (let k = 0; k < raw.length; k++) {
      const s = raw[k];
      const last = plain[plain.length - 1];
      if (last && last.start === s.start + slide) {
        if (s.size === raw[k - 1].size && raw[k - 1].start === s.start && last.names.includes(raw[k - 1].name)) last.names.push(s.name);
        continue;
      }
      let j = k + 1;
      while (j < raw.length && raw[j].start === s.start) j++;
      const end = s.size > 0 ? s.start + s.size : j < raw.length ? raw[j].start : Infinity;
      plain.push({ start: s.start + slide, end: end + slide, names: [s.name] });
    }
    // Every symbol's first byte, middle and last byte; each address named the same or unnamed by both.
    let checked = 0;
    for (let k = 0; k < plain.length; k += 7) {
      const p = plain[k];
      if (p.start < table.start || p.start >= table.end || !Number.isFinite(p.end)) continue;
      for (const addr of [p.start, Math.floor((p.start + p.end) / 2), p.end - 1]) {
        if (addr >= table.end) continue;
        const i = findSymbol(table, addr);
        const theirs = plain[lastAtOrBefore(plain, addr)];
        const expected = theirs && addr < Math.min(theirs.end, table.end) ? theirs.names : [];
        const ours = i >= 0 ? table.name(i) : undefined;
        assert.ok(
          ours === undefined ? expected.length === 0 : expected.includes(ours),
          `${table.path} at 0x${addr.toString(16)}: ${ours} for ${expected.join(' / ')}`,
        );
        checked++;
      }
    }
    assert.ok(checked > 100, `${table.path}: ${checked} addresses checked`);
  }
});
