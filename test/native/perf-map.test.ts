// A V8 perf map read so that an address is named by the code that lives there now: entries
// written later win over the older ones they overlap (freed code whose place was reused).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerfMap } from '../../src/native/perf-map.js';
import { PerfSampleReader, type RawSample } from '../../src/native/perf-script.js';

// As on Node 24: the top-level code of a module, flushed (its place freed), then the optimized
// code of another function created over it; a big builtin spanning both; an unrelated entry.
const MAP = [
  '1000 400 Builtin:InterpreterEntryTrampoline',
  '2000 100 JS:~ node:internal/tls/common:1:1',
  '2100 80 JS:^protoGetter node:net:1171:21',
  '2040 200 JS:*handler /app/server.js:13:18',
  '3000 10 JS:~tiny /app/server.js:1:1',
  'not a map line',
  '4000 0 JS:~empty /app/server.js:2:1',
  '',
].join('\n');

test('perf map: the newest entry covering an address names it; older overlapped ones do not', () => {
  const map = PerfMap.parse(MAP);
  assert.equal(map.size, 5, 'malformed and empty-size lines skipped');
  assert.equal(map.nameAt(0x2010), 'JS:~ node:internal/tls/common:1:1', 'only the old entry covers it');
  assert.equal(map.nameAt(0x2050), 'JS:*handler /app/server.js:13:18', 'written after tls/common, over it');
  assert.equal(map.nameAt(0x2120), 'JS:*handler /app/server.js:13:18', 'written after protoGetter, over it');
  assert.equal(map.nameAt(0x2239), 'JS:*handler /app/server.js:13:18');
  assert.equal(map.nameAt(0x2240), undefined, 'one past the end');
  assert.equal(map.nameAt(0x1200), 'Builtin:InterpreterEntryTrampoline');
  assert.equal(map.nameAt(0x3005), 'JS:~tiny /app/server.js:1:1');
  assert.equal(map.nameAt(0x4000), undefined);
  assert.equal(map.nameAt(0x10), undefined);
});

test('perf map: a missing file reads as no map', () => {
  assert.equal(PerfMap.read(join(tmpdir(), 'hotpath-no-such-perf-1.map')), undefined);
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-perfmap-'));
  writeFileSync(join(dir, 'perf-7.map'), MAP);
  assert.equal(PerfMap.read(join(dir, 'perf-7.map'))?.nameAt(0x2050), 'JS:*handler /app/server.js:13:18');
});

test("perf script with the map: perf's stale names replaced by the newest entry, callers looked up one byte before their return address", () => {
  // perf named the handler's optimized code by the flushed entry it overlaps.
  const text = [
    'node 77/77 [001] 100.000100: 1000000 cpu-clock:pppH:',
    '\t    3001 JS:~tiny /app/server.js:1:1+0x1 (/tmp/perf-77.map)',
    '\t    2050 JS:~ node:internal/tls/common:1:1+0x50 (/tmp/perf-77.map)',
    '\t    2240 JS:^protoGetter node:net:1171:21+0x40 (/tmp/perf-77.map)',
    '\t    55aa uv_run+0x10 (/usr/bin/node)',
    '',
  ].join('\n');
  const read = (maps?: (pid: number) => PerfMap | undefined) => {
    const out: RawSample[] = [];
    const r = new PerfSampleReader('t.perf', (s) => out.push(s), maps);
    for (const line of text.split('\n')) r.line(line);
    r.end();
    return out[0];
  };
  const asPerf = read();
  assert.deepEqual(
    asPerf.frames.map((f) => f.functionName),
    ['tiny', '', 'protoGetter', 'uv_run'],
  );
  const map = PerfMap.parse(MAP);
  const seen: number[] = [];
  const fixed = read((pid) => (seen.push(pid), map));
  assert.deepEqual(seen, [77, 77, 77]);
  // 0x2050 → handler; 0x2240 is a return address one past handler's last byte: 0x223f is handler's.
  assert.deepEqual(
    fixed.frames.map((f) => f.functionName),
    ['tiny', 'handler', 'handler', 'uv_run'],
  );
  assert.deepEqual(fixed.optimized, [false, true, true, false]);
  assert.equal(fixed.frames[1].url, 'file:///app/server.js');
  // Another pid's map is not used for these frames.
  assert.deepEqual(
    read(() => undefined).frames.map((f) => f.functionName),
    ['tiny', '', 'protoGetter', 'uv_run'],
  );
});
