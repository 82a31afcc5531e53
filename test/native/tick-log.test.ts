// The tick log reader on small logs written here in V8's format: code events honoured in log
// order (each tick named as V8 named the code then), and every kind of bad input a coded
// error or a warning that says which ticks stay unnamed and why.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseTickLog } from '../../src/native/tick-log.js';
import { processTickLog, resolveTicks } from '../../src/native/resolve-ticks.js';
import { computeProfStatistics, formatProfStatistics } from '../../src/native/prof-statistics.js';
import { ticksToCpuProfile } from '../../src/native/ticks-to-cpuprofile.js';
import { CodeMap } from '../../src/native/code-map.js';
import { runCli } from '../../src/cli/cli.js';
import type { CliIO } from '../../src/cli/io.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-ticklog-'));
const write = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return 'no error';
};

const head = 'v8-version,11,3,244,8,-node.38,0\nv8-platform,linux,linux\nprofiler,begin,1000\n';
const fn = (addr: string, size: number, name: string, sfi: string, state: string) =>
  `code-creation,JS,10,100,${addr},${size},${name},${sfi},${state}\n`;
const tick = (pc: string, t: number, state = 0, ...stack: string[]) =>
  `tick,${pc},${t},0,0x0,${state}${stack.map((s) => `,${s}`).join('')}\n`;

test('code map: a new range replaces what it overlaps; move and delete by start', () => {
  const m = new CodeMap<string>();
  m.add(100, 10, 'a');
  m.add(120, 10, 'b');
  m.add(105, 20, 'c'); // overlaps both
  assert.equal(m.size, 1);
  assert.equal(m.find(110), 'c');
  assert.equal(m.find(99), undefined);
  assert.ok(m.move(105, 300));
  assert.equal(m.find(110), undefined);
  assert.equal(m.find(310), 'c');
  assert.ok(m.delete(300));
  assert.ok(!m.delete(300));
  assert.equal(m.size, 0);
});

test('ticks are named by the code map at their moment: creation, tier-up, move, delete, sfi rename', () => {
  const text =
    head +
    fn('0x10000', 0x100, 'work /app/a.js:1:10', '0x9000', '~') +
    tick('0x10010', 1000) +
    fn('0x20000', 0x100, 'work /app/a.js:1:10', '0x9000', '*') +
    tick('0x20010', 2000, 0, '0x10020') +
    'code-move,0x20000,0x30000\n' +
    tick('0x30010', 3000) +
    tick('0x20010', 3100) +
    'code-delete,0x30000\n' +
    tick('0x30010', 4000) +
    // The function object's memory now holds another function: its live code is renamed.
    fn('0x40000', 0x100, 'other /app/b.js:2:3', '0x9000', '^') +
    tick('0x10010', 5000) +
    'code-deopt,100,0,0x10000,0,0,eager,<a.js:1:20>,wrong map\n';
  const log = parseTickLog(text, 'mem.log');
  const r = resolveTicks(log, []);
  const names = (t: number) => {
    const out = [];
    for (let i = r.frameStart[t]; i < r.frameStart[t + 1]; i++) out.push(r.frames[i] < 0 ? 'UNKNOWN' : r.entries[r.frames[i]].name);
    return out;
  };
  assert.deepEqual(names(0), ['JS: ~work /app/a.js:1:10']);
  assert.deepEqual(names(1), ['JS: *work /app/a.js:1:10', 'JS: ~work /app/a.js:1:10']);
  assert.deepEqual(names(2), ['JS: *work /app/a.js:1:10']);
  assert.deepEqual(names(3), ['UNKNOWN']); // moved away
  assert.deepEqual(names(4), ['UNKNOWN']); // deleted
  assert.deepEqual(names(5), ['JS: ~other /app/b.js:2:3']);
  assert.equal(r.deopts[0]?.lastReason, 'wrong map');
  const s = computeProfStatistics(r);
  assert.equal(s.ticks, 6);
  assert.equal(s.unaccounted, 2);
  assert.ok(s.unresolved[0].reason.includes('no code the log describes'));
  // The CPU profile merges tiers into one frame with the file and 0-based line.
  const p = ticksToCpuProfile(r);
  const work = p.nodes.filter((n) => n.callFrame.functionName === 'work');
  assert.ok(work.length >= 1);
  assert.equal(work[0].callFrame.url, 'file:///app/a.js');
  assert.equal(work[0].callFrame.lineNumber, 0);
  assert.equal(work[0].callFrame.columnNumber, 9);
  assert.equal(p.samples.length, p.timeDeltas.length);
});

test('bad input: empty, binary, not a tick log, no ticks, an old V8: coded errors', () => {
  assert.equal(
    codeOf(() => parseTickLog('', 'e.log')),
    'HOTPATH_ERR_TICK_LOG',
  );
  assert.equal(
    codeOf(() => parseTickLog('\u0000\u0001ELF', 'b.log')),
    'HOTPATH_ERR_TICK_LOG',
  );
  assert.equal(
    codeOf(() => parseTickLog('{"nodes": []}\n', 'p.cpuprofile')),
    'HOTPATH_ERR_TICK_LOG',
  );
  assert.equal(
    codeOf(() => parseTickLog('GET / HTTP/1.1 200\nGET / HTTP/1.1 200\n', 'access.log')),
    'HOTPATH_ERR_TICK_LOG',
  );
  assert.equal(
    codeOf(() => parseTickLog(head + fn('0x10000', 16, 'f /a.js:1:1', '0x9', '~'), 'nolog.log')),
    'HOTPATH_ERR_TICK_LOG',
  );
  assert.equal(
    codeOf(() => parseTickLog('v8-version,6,8,275,32,-node.59,0\n' + tick('0x1', 1), 'old.log')),
    'HOTPATH_ERR_TICK_LOG_VERSION',
  );
});

test('bad input: a truncated log is read up to the cut, with a warning', () => {
  const full = head + fn('0x10000', 0x100, 'work /app/a.js:1:10', '0x9000', '*') + tick('0x10010', 1000) + tick('0x10010', 2000);
  const cut = full + 'tick,0x100';
  const r = resolveTicks(parseTickLog(cut, 'cut.log'), []);
  assert.equal(r.times.length, 2);
  assert.ok(
    r.warnings.some((w) => w.includes('cut short')),
    r.warnings.join('\n'),
  );
  assert.match(formatProfStatistics(computeProfStatistics(r)), /2 ticks, 0 unaccounted/);
});

test('bad input: malformed lines are skipped, counted, and the first one is quoted with its line number', () => {
  const text =
    head +
    fn('0x10000', 0x100, 'work /app/a.js:1:10', '0x9000', '*') +
    tick('0x10010', 1000) +
    'tick,0x10010,zz\n' +
    'code-creation,JS,10\n' +
    'timer-event-start,V8.Execute,1500\n' +
    tick('0x10010', 2000);
  const log = parseTickLog(text, 'bad.log');
  assert.equal(log.badLines, 2);
  assert.deepEqual(log.firstBadLine, { line: 6, text: 'tick,0x10010,zz' });
  const r = resolveTicks(log, []);
  assert.equal(r.times.length, 2);
  assert.ok(
    r.warnings.some((w) => w.includes('2 malformed line(s) skipped (the first, line 6: "tick,0x10010,zz")')),
    r.warnings.join('\n'),
  );
});

test('bad input: a binary that is gone leaves its ticks unnamed, and says why', async () => {
  const log = write(
    'gone.log',
    head +
      'shared-library,/nonexistent/bin/node,0x400000,0x2600000,0\n' +
      tick('0x500000', 1000, 6) +
      tick('0x500010', 2000, 6) +
      fn('0x10000', 0x100, 'f /a.js:1:1', '0x9', '*') +
      tick('0x10001', 3000),
  );
  const r = await processTickLog(log);
  const s = computeProfStatistics(r);
  assert.equal(s.unaccounted, 2);
  assert.match(s.unresolved[0].reason, /\/nonexistent\/bin\/node is gone/);
  const text = formatProfStatistics(s);
  assert.match(text, /\[Unaccounted ticks\]/);
  assert.match(text, /is gone/);
});

test('bad input: a log from another node binary than the one now at its path: C++ left unnamed, with the reason', async (t) => {
  const nm = (() => {
    try {
      return execFileSync('nm', ['-n', process.execPath], { encoding: 'utf8', maxBuffer: 256 << 20 });
    } catch {
      return '';
    }
  })();
  const builtins = [...nm.matchAll(/^([0-9a-f]+) [tT] Builtins_(\w+)$/gm)].slice(0, 5);
  if (builtins.length < 3) {
    t.skip('this node binary has no Builtins_ symbols to compare');
    return;
  }
  // The same builtins placed 0x1000 further than this binary has them: another build wrote the log.
  const lines = builtins.map((m) => `code-creation,Builtin,2,10,0x${(parseInt(m[1], 16) + 0x1000).toString(16)},16,${m[2]}\n`).join('');
  const start = parseInt(builtins[0][1], 16);
  const log = write(
    'other.log',
    head +
      `shared-library,${process.execPath},0x400000,0x${(start + 0x100000).toString(16)},0\n` +
      lines +
      tick(`0x${(start - 0x100).toString(16)}`, 1000, 6),
  );
  const r = await processTickLog(log);
  const node = r.libraries.find((l) => l.path === process.execPath);
  assert.equal(node?.status, 'mismatch');
  assert.match(computeProfStatistics(r).unresolved[0].reason, /not the binary that wrote the log/);
});

test('hotpath prof: a missing file and a file that is not a tick log are coded errors, never a stack', async () => {
  for (const file of [join(dir, 'nope.log'), write('notes.txt', 'hello\nworld\n')]) {
    let err = '';
    const sink = new Writable({
      write(c, _e, cb) {
        err += String(c);
        cb();
      },
    });
    const io: CliIO = { stdout: sink, stderr: sink, env: {}, cwd: dir, color: false, interactive: false };
    const code = await runCli(['prof', file, '-o', join(dir, 'out')], io);
    assert.equal(code, 1, err);
    assert.match(err, /HOTPATH_ERR_TICK_LOG/);
    assert.doesNotMatch(err, /\n\s+at /);
  }
});
