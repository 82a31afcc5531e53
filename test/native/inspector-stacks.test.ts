// perf's samples take from the inspector profile of the same moment what perf's map cannot
// know: the callees V8 inlined into optimized code, and the source line.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CpuCallFrame, CpuProfile } from '../../src/profile/cpu-profile.js';
import { InspectorStacks } from '../../src/native/inspector-stacks.js';
import { readPerfSamples } from '../../src/native/perf-script.js';
import { nativeProcessProfiles } from '../../src/native/native-profile.js';

const url = 'file:///app/server.js';
const frame = (functionName: string, lineNumber: number, u = url): CpuCallFrame => ({
  functionName,
  scriptId: '7',
  url: u,
  lineNumber,
  columnNumber: 4,
});
const native = (functionName: string): CpuCallFrame => ({ functionName, scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 });

/**
 * An inspector profile, 1 ms apart from 10.000 s: root → handler → compressBody → deflateSync
 * (node:zlib) → the native writeSync, whose ticks are on deflateSync's lines 40 (3) and 41 (1);
 * `other` samples sit in root → handler → render.
 */
function inspectorProfile(kinds: ('zlib' | 'other')[]): CpuProfile {
  const nodes = [
    { id: 1, callFrame: native('(root)'), children: [2] },
    { id: 2, callFrame: frame('handler', 9), children: [3, 6] },
    { id: 3, callFrame: frame('compressBody', 2), children: [4] },
    { id: 4, callFrame: frame('deflateSync', 30, 'node:zlib'), children: [5] },
    {
      id: 5,
      callFrame: native('writeSync'),
      children: [],
      positionTicks: [
        { line: 40, ticks: 3 },
        { line: 41, ticks: 1 },
      ],
    },
    { id: 6, callFrame: frame('render', 20), children: [] },
  ];
  return {
    nodes,
    startTime: 10_000_000,
    endTime: 10_000_000 + kinds.length * 1000,
    samples: kinds.map((k) => (k === 'zlib' ? 5 : 6)),
    timeDeltas: kinds.map(() => 1000),
  };
}

/** perf's view: the handler's optimized code (compressBody inlined in it) → deflateSync → zlib's C. */
function perfSample(t: number, handlerMark = '*'): string {
  return [
    `node 100/100 ${t.toFixed(6)}: 1001001 cpu-clock:ppp: `,
    `\t    7f0000000100 deflate_slow (/usr/lib/libz.so.1)`,
    `\t    7f0000002000 JS:~deflateSync node:zlib:31:5 (/tmp/perf-100.map)`,
    `\t    7f0000001000 JS:${handlerMark}handler /app/server.js:10:5 (/tmp/perf-100.map)`,
    `\t          14ac8a7 uv_run+0x187 (/usr/bin/node)`,
    '',
  ].join('\n');
}

const names = (frames: CpuCallFrame[]) => frames.map((f) => f.functionName);

test('an optimized frame gets the inlined callee the inspector saw at the same moment, and the innermost JS frame its line', () => {
  const stacks = new InspectorStacks(inspectorProfile(['zlib', 'zlib', 'zlib', 'zlib']));
  const { raw } = readPerfSamples(perfSample(10.0021), 'x.perf');
  const e = stacks.enrich(raw[0].frames, raw[0].optimized, 10.0021e6);
  assert.equal(e.matched, true);
  assert.equal(e.inserted, 1);
  assert.deepEqual(names(e.frames), ['deflate_slow', 'deflateSync', 'compressBody', 'handler', 'uv_run']);
  assert.equal(e.frames[2].url, url);
  // The native writeSync's ticks are its caller's call site: deflateSync's line.
  assert.equal(e.line?.index, 1);
  assert.ok(e.line?.line === 40 || e.line?.line === 41);
});

test('lines are spread over the samples in proportion to the ticks', () => {
  const stacks = new InspectorStacks(inspectorProfile(['zlib', 'zlib', 'zlib', 'zlib']));
  const { raw } = readPerfSamples(perfSample(10.0021), 'x.perf');
  const lines = new Map<number, number>();
  for (let i = 0; i < 400; i++) {
    const l = stacks.enrich(raw[0].frames, raw[0].optimized, 10.0021e6).line!.line;
    lines.set(l, (lines.get(l) ?? 0) + 1);
  }
  // 3:1 as the ticks are, to a sample or two (the lines are picked evenly, not at random).
  assert.equal((lines.get(40) ?? 0) + (lines.get(41) ?? 0), 400);
  assert.ok(Math.abs((lines.get(40) ?? 0) - 300) <= 2, JSON.stringify([...lines]));
});

test('interpreted code inlines nothing: perf frames are kept, no inspector frame is inserted', () => {
  const stacks = new InspectorStacks(inspectorProfile(['zlib', 'zlib', 'zlib']));
  const { raw } = readPerfSamples(perfSample(10.002, '~'), 'x.perf');
  const e = stacks.enrich(raw[0].frames, raw[0].optimized, 10.002e6);
  assert.equal(e.inserted, 0);
  assert.deepEqual(names(e.frames), ['deflate_slow', 'deflateSync', 'handler', 'uv_run']);
  // The innermost JS frame is still the inspector's innermost: it has a line.
  assert.equal(e.line?.index, 1);
});

test('an inspector sample of another moment (other JS frames) or too far away changes nothing', () => {
  const stacks = new InspectorStacks(inspectorProfile(['other', 'other', 'other', 'zlib']));
  const { raw } = readPerfSamples(perfSample(10.0015), 'x.perf');
  // Nearest are 'other' samples (10.001, 10.002, 10.003): they do not hold deflateSync; the
  // zlib sample at 10.004 is more than one interval (1 ms) away.
  const e = stacks.enrich(raw[0].frames, raw[0].optimized, 10.0015e6);
  assert.equal(e.matched, false);
  assert.deepEqual(names(e.frames), ['deflate_slow', 'deflateSync', 'handler', 'uv_run']);
  assert.equal(e.line, undefined);
  // Within one interval, the nearest sample that agrees is taken, not merely the nearest.
  const near = stacks.enrich(raw[0].frames, raw[0].optimized, 10.0031e6);
  assert.equal(near.matched, true);
  assert.equal(near.inserted, 1);
  assert.deepEqual(stacks.near(10.02e6), []);
});

test("the main thread's profile carries the inlined frames and the lines as positionTicks", () => {
  const text = [10.001, 10.002, 10.003, 10.004].map((t) => perfSample(t)).join('\n');
  const { raw } = readPerfSamples(text, 'x.perf');
  const p = nativeProcessProfiles(raw, 100, {
    startUs: 10_000_000,
    endUs: 10_005_000,
    periodUs: 1000,
    inspector: inspectorProfile(['zlib', 'zlib', 'zlib', 'zlib', 'zlib']),
  });
  assert.deepEqual(p.inspector, { matched: 4, inlined: 4, lined: 4 });
  const main = p.main!;
  const byName = (n: string) => main.nodes.find((x) => x.callFrame.functionName === n)!;
  assert.ok(byName('compressBody').children!.includes(byName('deflateSync').id));
  const ticks = byName('deflateSync').positionTicks!;
  assert.equal(
    ticks.reduce((s, t) => s + t.ticks, 0),
    4,
  );
  assert.ok(ticks.every((t) => t.line === 40 || t.line === 41));
  // Without the inspector's profile: perf's frames alone, no line.
  const alone = nativeProcessProfiles(raw, 100, { startUs: 10_000_000, endUs: 10_005_000, periodUs: 1000 });
  assert.equal(alone.inspector, undefined);
  assert.ok(!alone.main!.nodes.some((n) => n.callFrame.functionName === 'compressBody' || n.positionTicks));
});
