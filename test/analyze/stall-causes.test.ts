// stallCulprits: the stalls' own samples charged to app functions, with the run's function
// ranges undoing V8's inlining (a callee's line in the leaf, or the leaf's line that calls it)
// and naming anonymous functions.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stallCulprits } from '../../src/analyze/signals/stall-causes.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import type { StallMessage } from '../../src/agent/protocol.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-stalls-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// server.js, 1-based lines: spinFor 2-6, the handler 8-11 (calls spinFor on line 9), audit 13-15.
const file = join(dir, 'server.js');
writeFileSync(
  file,
  [
    "const http = require('node:http');",
    'function spinFor(ms) {',
    '  const end = Date.now() + ms;',
    '  while (Date.now() < end);',
    '  return end;',
    '}',
    '',
    'http.createServer((req, res) => {',
    '  spinFor(700);',
    '  res.end();',
    '}).listen(0);',
    '',
    'function audit() {',
    '  return 1;',
    '}',
  ].join('\n'),
);
const url = pathToFileURL(file).href;
// 0-based rows: [name, startLine, startColumn, endLine, endColumn, count].
const ranges = {
  [url]: [
    ['', 0, 0, 15, 0, 1],
    ['spinFor', 1, 0, 5, 1, 3],
    ['', 7, 18, 10, 1, 3],
    ['audit', 12, 0, 14, 1, 0],
  ] as [string, number, number, number, number, number][],
};

const handler = { function: '(anonymous)', file: url, line: 8, column: 19 };
const emit = { function: 'emit', file: 'node:events', line: 471, column: 44 };

function runWith(cause: StallMessage['cause'], withRanges = true) {
  const run = syntheticRun({
    cwd: dir,
    rps: 2,
    elu: 0.9,
    cores: 0.9,
    stalls: [
      { atProgress: 0.4, durationMs: 700, cause },
      { atProgress: 0.7, durationMs: 700, cause },
    ],
  });
  return withRanges ? { ...run, functionRanges: ranges } : run;
}

test('a leaf whose hottest line calls one function of its script that ran: that function, inlined', () => {
  const [top] = stallCulprits(runWith([{ share: 0.98, stack: [handler, emit], line: 9 }]));
  assert.equal(top.site.function, 'spinFor');
  assert.equal(top.site.line, 2);
  assert.equal(Math.round(top.blockedMs), 1372);
  assert.equal(top.stalls, 2);
});

test('a leaf whose hottest line lies in another function of its script that ran: that function', () => {
  const [top] = stallCulprits(runWith([{ share: 0.9, stack: [handler, emit], line: 4 }]));
  assert.equal(top.site.function, 'spinFor');
});

test('without ranges, or a line of its own that calls nothing known, the frame as sampled', () => {
  assert.equal(stallCulprits(runWith([{ share: 0.9, stack: [handler, emit], line: 9 }], false))[0].site.function, '(anonymous)');
  assert.equal(stallCulprits(runWith([{ share: 0.9, stack: [handler, emit], line: 10 }]))[0].site.function, '(anonymous)');
  // audit never ran: a line in it is not evidence of inlining.
  assert.equal(stallCulprits(runWith([{ share: 0.9, stack: [handler, emit], line: 14 }]))[0].site.function, '(anonymous)');
});

test('the sampled frame and its inlined copy count as one function', () => {
  const spin = { function: 'spinFor', file: url, line: 2, column: 17 };
  const [top, ...rest] = stallCulprits(
    runWith([
      { share: 0.5, stack: [spin, handler, emit], line: 4 },
      { share: 0.48, stack: [handler, emit], line: 9 },
    ]),
  );
  assert.equal(top.site.function, 'spinFor');
  assert.ok(Math.abs(top.share - 0.98) < 1e-9, String(top.share));
  assert.deepEqual(rest, []);
});
