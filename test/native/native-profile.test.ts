// perf's samples of one process as the run's CPU profiles: the main thread on a real timeline
// cut to the load window with the stretches it did not run as (idle), other threads apart.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readPerfSamples } from '../../src/native/perf-script.js';
import { nativeProcessProfiles } from '../../src/native/native-profile.js';
import { sampleWeights } from '../../src/profile/sample-weights.js';
import { activeTime } from '../../src/profile/active-time.js';

/** `perf script -F +pid` text: one sample per (tid, time, leaf). */
function script(samples: [number, number, string][]): string {
  return samples
    .map(([tid, t, leaf]) =>
      [
        `node 100/${tid} ${t.toFixed(6)}: 1001001 cpu-clock:ppp: `,
        `\t    ffff81000000 ${leaf} ([kernel.kallsyms])`,
        `\t    7f0000001000 JS:*handle /app/server.js:3:10+0x10 (/tmp/perf-100.map)`,
        `\t          14ac8a7 uv_run+0x187 (/usr/bin/node)`,
        '',
      ].join('\n'),
    )
    .join('\n');
}

const P = 1000; // µs, 1 kHz

test('the main thread: samples on their own times, gaps as (idle), cut to the window', () => {
  // Window 10.000-10.020 s. Busy 10.001-10.005 (5 samples), nothing until 10.015, busy again to 10.017.
  const times = [10.001, 10.002, 10.003, 10.004, 10.005, 10.016, 10.017];
  const text = script([
    [100, 9.99, 'before_window'],
    ...times.map((t) => [100, t, 'tcp_sendmsg'] as [number, number, string]),
    [101, 10.003, 'deflate_slow'],
    [100, 10.04, 'after_window'],
  ]);
  const { raw } = readPerfSamples(text, 'x.perf');
  const p = nativeProcessProfiles(raw, 100, { startUs: 10_000_000, endUs: 10_020_000, periodUs: P });
  assert.equal(p.mainSamples, 7);
  assert.equal(p.jsSamples, 7);
  assert.deepEqual(p.threadSamples, { node: 1 });
  const main = p.main!;
  const names = main.nodes.map((n) => n.callFrame.functionName);
  assert.ok(!names.includes('before_window [kernel]') && !names.includes('after_window [kernel]'));
  // One stack, leaf last: uv_run → the JS function (file and line from the perf map) → the kernel.
  const js = main.nodes.find((n) => n.callFrame.functionName === 'handle')!;
  assert.equal(js.callFrame.url, 'file:///app/server.js');
  assert.equal(js.callFrame.lineNumber, 2);
  assert.equal(main.nodes.find((n) => js.children?.includes(n.id))!.callFrame.functionName, 'tcp_sendmsg [kernel]');
  // Time: the window is 20 ms; 7 ms ran, the rest was idle.
  assert.equal(main.startTime, 10_000_000);
  assert.equal(main.endTime, 10_020_000);
  const a = activeTime(main);
  assert.equal(Math.round(a.totalUs), 20_000);
  assert.equal(Math.round(a.activeUs), 7_000);
  const w = sampleWeights(main);
  assert.ok([...w.weight].every((x) => x >= 0));
  // The other thread, apart, under its thread frame.
  assert.ok(p.threads!.nodes.some((n) => n.callFrame.functionName === '[thread node 101]'));
});

test('a process perf never sampled has no main profile', () => {
  const { raw } = readPerfSamples(script([[200, 10.001, 'x']]), 'x.perf');
  const p = nativeProcessProfiles(raw, 100, { startUs: 10_000_000, endUs: 10_020_000, periodUs: P });
  assert.equal(p.main, undefined);
  assert.equal(p.mainSamples, 0);
});
