// Issue 18, "missing data is a finding, never healthy": a target that crashed or exited during the
// run is a critical finding naming what ended it (the error and its first app frame, a heap out of
// memory and the leak behind it, a signal, an exit code) and when; a run that did not complete
// (Ctrl-C, a failure) gets HOTPATH_INCOMPLETE; neither is ever called healthy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeRun } from '../../src/analyze/analyze-run.js';
import { targetEnded } from '../../src/analyze/target-ended.js';
import { syntheticRun, type SyntheticOptions } from '../fixtures/telemetry/synthetic-run.js';
import type { RunData } from '../../src/run-dir/run-data.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transformSync } from 'esbuild';

type Outcome = RunData['meta']['outcome'];

/** A 4 s load cut short: the load asked for `askedS`, the target ended `endedAtS` into it. */
function cutShort(outcome: Outcome, o: SyntheticOptions = {}, askedS = 10, endedAtS?: number): RunData {
  const run = syntheticRun({ durationS: 4, ...o });
  const load = run.load!;
  return {
    ...run,
    meta: {
      ...run.meta,
      outcome: endedAtS === undefined ? outcome : { ...outcome, at: load.start + endedAtS * 1000 },
      options: { duration: askedS },
    },
    load: { ...load, options: { ...load.options, duration: askedS } },
  };
}

const crashTail = (file = '/srv/app/routes/orders.js') => [
  `${file}:12`,
  '    const id = order.id.trim();',
  '                        ^',
  "TypeError: Cannot read properties of undefined (reading 'trim')",
  `    at parseOrder (${file}:12:25)`,
  '    at handle (/srv/app/node_modules/router/index.js:40:3)',
  '    at Server.<anonymous> (/srv/app/server.js:8:5)',
  '    at Server.emit (node:events:524:28)',
  'Node.js v20.20.2',
];

test('an uncaught exception: critical, the first app frame is the culprit, when and after how many requests', () => {
  const run = cutShort(
    { status: 'target-crashed', reason: 'The target exited with code 1 during the load phase', exitCode: 1, stderrTail: crashTail() },
    {},
    10,
    3,
  );
  const [f] = targetEnded(run);
  assert.equal(f.code, 'HOTPATH_TARGET_ENDED');
  assert.equal(f.category, 'target-ended');
  assert.equal(f.severity, 'critical');
  assert.match(f.title, /uncaught exception: TypeError: Cannot read properties of undefined/);
  assert.deepEqual(f.culprit, { function: 'parseOrder', file: 'routes/orders.js', line: 12, column: 25 });
  assert.match(f.summary, /3 s into the 10 s load asked \(30 %\), after [\d,]+ requests answered/);
  assert.equal(f.evidence.kind, 'uncaught-exception');
  assert.equal(f.evidence.intoLoadMs, 3000);
  assert.equal(f.evidence.loadShare, 0.3);
  assert.equal(f.evidence.culpritFrom, 'stderr');
  assert.deepEqual(f.evidence.stack, [
    'parseOrder routes/orders.js:12',
    'handle node_modules/router/index.js:40',
    '(anonymous) server.js:8',
    'emit node:events:524',
  ]);
  const all = analyzeRun(run);
  assert.equal(all[0].code, 'HOTPATH_TARGET_ENDED', 'what ended the run leads');
  assert.ok(!all.some((x) => x.code === 'HOTPATH_HEALTHY'));
});

test('an error thrown inside a dependency with no app frame on the stack names the dependency frame, never node internals', () => {
  const tail = [
    'Error: connect ECONNREFUSED',
    '    at Pool.connect (/srv/app/node_modules/pg/lib/pool.js:45:11)',
    '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
  ];
  const [f] = targetEnded(cutShort({ status: 'target-crashed', exitCode: 1, stderrTail: tail }));
  assert.deepEqual(f.culprit, { function: 'connect', file: 'node_modules/pg/lib/pool.js', line: 45, column: 11 });
});

test("the agent's own record of an uncaught throw comes first", () => {
  const run = cutShort({ status: 'target-crashed', exitCode: 1, stderrTail: crashTail() });
  run.throws = [
    {
      pid: 4242,
      threadId: 0,
      followed: 3,
      groups: [
        { count: 2, uncaught: false, frames: [{ function: 'retry', file: '/srv/app/db.js', line: 3, column: 1 }] },
        { count: 1, uncaught: true, frames: [{ function: 'validate', file: '/srv/app/lib/validate.js', line: 7, column: 9 }] },
      ],
    },
  ];
  const [f] = targetEnded(run);
  assert.deepEqual(f.culprit, { function: 'validate', file: 'lib/validate.js', line: 7, column: 9 });
  assert.equal(f.evidence.culpritFrom, 'agent');
});

test('an unhandled rejection; an ESM file:// stack', () => {
  const rejection = [
    'node:internal/process/promises:288',
    '            triggerUncaughtException(err, true /* fromPromise */);',
    '            ^',
    '[UnhandledPromiseRejection: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason "timeout".] {',
    "  code: 'ERR_UNHANDLED_REJECTION'",
    '}',
    'Node.js v20.20.2',
  ];
  const [r] = targetEnded(cutShort({ status: 'target-crashed', exitCode: 1, stderrTail: rejection }));
  assert.equal(r.evidence.kind, 'unhandled-rejection');
  assert.match(r.title, /unhandled promise rejection: \[UnhandledPromiseRejection/);
  assert.equal(r.culprit, undefined, 'no app frame: no culprit invented');
  const esm = [
    'file:///srv/app/server.mjs:5',
    "  if (n === 2000) throw new Error('user store unavailable');",
    '                  ^',
    'Error: user store unavailable',
    '    at loadUser (file:///srv/app/server.mjs:5:25)',
    'Node.js v20.20.2',
  ];
  const [e] = targetEnded(cutShort({ status: 'target-crashed', exitCode: 1, stderrTail: esm }));
  assert.equal(e.evidence.kind, 'uncaught-exception');
  assert.deepEqual(e.culprit, { function: 'loadUser', file: 'server.mjs', line: 5, column: 25 });
  assert.equal(e.evidence.thrownAt, 'server.mjs:5');
});

test('process.exit(n) by app code, an exit with code 0, a signal: each says what happened, none is healthy', () => {
  const exit3 = targetEnded(cutShort({ status: 'target-crashed', exitCode: 3, stderrTail: ['quota reached, bailing out'] }))[0];
  assert.equal(exit3.evidence.kind, 'exit-call');
  assert.match(exit3.summary, /process\.exit\(3\) was most likely called/);
  assert.equal(exit3.culprit, undefined);
  const exit0 = cutShort({ status: 'target-exited', exitCode: 0, reason: 'The target exited with code 0 during the load phase' });
  const [f0] = targetEnded(exit0);
  assert.equal(f0.evidence.kind, 'exit');
  assert.equal(f0.severity, 'critical', 'a server that stopped serving mid-load');
  assert.ok(!analyzeRun(exit0).some((x) => x.code === 'HOTPATH_HEALTHY'));
  const killed = targetEnded(cutShort({ status: 'target-crashed', exitCode: null, signal: 'SIGKILL', stderrTail: [] }))[0];
  assert.equal(killed.evidence.kind, 'signal');
  assert.match(killed.title, /killed by SIGKILL/);
});

test("a watcher's child that crashed is named in the summary", () => {
  const [f] = targetEnded(
    cutShort({
      status: 'target-crashed',
      exitCode: 1,
      reason:
        'The target (pid 77, `node server.mts`, a child of the command hotpath started, which ran on) exited with code 1 during the load phase',
      stderrTail: crashTail(),
    }),
  );
  assert.match(f.summary, /It was pid 77, `node server\.mts`, a child of the command hotpath started\./);
});

test('a heap out of memory beside a memory leak: the leak leads as its cause, the crash says so', () => {
  const tail = ['<--- JS stacktrace --->', 'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory'];
  const run = cutShort(
    { status: 'target-crashed', exitCode: null, signal: 'SIGABRT', stderrTail: tail },
    { heapMB: (p) => 40 + 60 * p, heapSawMB: 10, majorGcPerS: 1 },
  );
  const all = analyzeRun(run);
  const crash = all.find((x) => x.code === 'HOTPATH_TARGET_ENDED')!;
  assert.equal(crash.evidence.kind, 'out-of-memory');
  assert.match(crash.title, /heap ran out of memory/);
  assert.equal(crash.evidence.causedBy, 'HOTPATH_MEMORY_LEAK');
  assert.match(crash.summary, /Its cause is the memory growth found beside it/);
  assert.equal(all[0].code, 'HOTPATH_MEMORY_LEAK', 'the cause leads');
  assert.equal(all[0].severity, 'critical');
  assert.equal(all[0].evidence.explains, 'HOTPATH_TARGET_ENDED');
  // Without a leak found, the crash leads on its own.
  const alone = analyzeRun(cutShort({ status: 'target-crashed', exitCode: null, signal: 'SIGABRT', stderrTail: tail }));
  assert.equal(alone[0].code, 'HOTPATH_TARGET_ENDED');
  assert.equal(alone[0].evidence.causedBy, undefined);
});

test('a run interrupted by Ctrl-C gets HOTPATH_INCOMPLETE with its phase and how much of the load ran, never healthy', () => {
  const run = cutShort({ status: 'interrupted', reason: 'Interrupted (Ctrl-C) during the load phase' });
  const all = analyzeRun(run);
  assert.ok(!all.some((x) => x.code === 'HOTPATH_HEALTHY'));
  const f = all.find((x) => x.code === 'HOTPATH_INCOMPLETE')!;
  assert.match(
    f.title,
    /missing the rest of the run \(interrupted \(Ctrl-C\) during the load phase, 4 s into the 10 s load asked \(40 %\)/,
  );
  assert.equal(f.evidence.outcome, 'interrupted');
  assert.equal(f.evidence.loadShare, 0.4);
  // Before the load: said so.
  const early = syntheticRun({});
  early.meta = {
    ...early.meta,
    phases: [{ phase: 'warmup', start: 1, end: 2 }],
    outcome: { status: 'interrupted', reason: 'Interrupted (Ctrl-C) during the warmup phase' },
  };
  early.load = undefined;
  const g = analyzeRun(early).find((x) => x.code === 'HOTPATH_INCOMPLETE')!;
  assert.match(g.title, /during the warmup phase, before the load started/);
});

test('a completed run is not touched; a failed one read back later is never healthy', () => {
  assert.deepEqual(targetEnded(syntheticRun({})), []);
  assert.ok(analyzeRun(syntheticRun({})).some((x) => x.code === 'HOTPATH_HEALTHY'));
  const failed = cutShort({ status: 'failed', reason: 'Cannot connect to 127.0.0.1:3000 (ECONNREFUSED)' });
  const all = analyzeRun(failed);
  assert.ok(!all.some((x) => x.code === 'HOTPATH_HEALTHY'));
  assert.match(all.find((x) => x.code === 'HOTPATH_INCOMPLETE')!.title, /cannot connect to 127\.0\.0\.1:3000/);
});

test("the agent's word on the exit: the caller of process.exit(), the uncaught error and its origin; a loader's emit wrapper is no caller", () => {
  const withCause = (outcome: Outcome, cause: NonNullable<RunData['threads'][number]['exitCause']>) => {
    const run = cutShort(outcome);
    run.threads[0].exitCause = cause;
    return run;
  };
  const exitCall = [
    { function: 'checkQuota', file: '/srv/app/lib/quota.js', line: 9, column: 5 },
    { function: 'handle', file: '/srv/app/server.js', line: 4, column: 3 },
  ];
  const [e] = targetEnded(withCause({ status: 'target-crashed', exitCode: 3, stderrTail: ['quota reached'] }, { exitCall }));
  assert.equal(e.evidence.kind, 'exit-call');
  assert.deepEqual(e.culprit, { function: 'checkQuota', file: 'lib/quota.js', line: 9, column: 5 });
  assert.match(e.summary, /process\.exit\(3\) was called in checkQuota \(lib\/quota\.js:9\)/);
  assert.equal(e.evidence.culpritFrom, 'agent');
  const [r] = targetEnded(
    withCause(
      { status: 'target-crashed', exitCode: 1, stderrTail: crashTail() },
      {
        uncaught: {
          origin: 'unhandledRejection',
          stack: [
            'Error: user store unavailable',
            '    at loadUser (/srv/app/store.js:3:55)',
            '    at async handle (/srv/app/server.js:9:3)',
          ],
        },
      },
    ),
  );
  assert.equal(r.evidence.kind, 'unhandled-rejection');
  assert.equal(r.evidence.error, 'Error: user store unavailable');
  assert.deepEqual(r.culprit, { function: 'loadUser', file: 'store.js', line: 3, column: 55 });
  const wrapper = [{ function: 'process.emit', file: '/srv/app/node_modules/tsx/dist/suppress-warnings.cjs', line: 1, column: 472 }];
  const [z] = targetEnded(withCause({ status: 'target-exited', exitCode: 0 }, { exitCall: wrapper }));
  assert.equal(z.evidence.kind, 'exit');
  assert.equal(z.culprit, undefined);
  assert.match(z.summary, /or it closed its server and its event loop ran out/);
});

test('a crash in built JavaScript is named in the source the user edits, through the source map on disk', (t) => {
  const app = mkdtempSync(join(tmpdir(), 'hotpath-ended-'));
  t.after(() => rmSync(app, { recursive: true, force: true }));
  mkdirSync(join(app, 'src'));
  mkdirSync(join(app, 'dist'));
  const source = [
    'interface Order { id?: string }',
    '',
    '// Orders arrive from the queue without an id when the upstream retries.',
    'export function parseOrder(order: Order): string {',
    '  const id: string = (order.id as string).trim();',
    '  return id;',
    '}',
    '',
  ].join('\n');
  writeFileSync(join(app, 'src', 'orders.ts'), source);
  const built = transformSync(source, { loader: 'ts', format: 'cjs', sourcemap: 'external', sourcefile: '../src/orders.ts' });
  writeFileSync(join(app, 'dist', 'orders.js'), `${built.code}//# sourceMappingURL=orders.js.map\n`);
  writeFileSync(join(app, 'dist', 'orders.js.map'), built.map);
  const lines = built.code.split('\n');
  const line = lines.findIndex((l) => l.includes('.trim()')) + 1;
  const column = lines[line - 1].indexOf('.trim()') + 2;
  assert.ok(line > 0, built.code);
  const file = join(app, 'dist', 'orders.js');
  const tail = [
    `${file}:${line}`,
    lines[line - 1],
    "TypeError: Cannot read properties of undefined (reading 'trim')",
    `    at parseOrder (${file}:${line}:${column})`,
    `    at Server.<anonymous> (${join(app, 'dist', 'server.js')}:8:5)`,
    '    at Server.emit (node:events:524:28)',
    'Node.js v20.20.2',
  ];
  const run = cutShort(
    { status: 'target-crashed', reason: 'The target exited with code 1 during the load phase', exitCode: 1, stderrTail: tail },
    { cwd: app },
    10,
    3,
  );
  const [f] = targetEnded(run);
  assert.equal(f.code, 'HOTPATH_TARGET_ENDED');
  assert.equal(f.culprit?.function, 'parseOrder');
  assert.equal(f.culprit?.file, 'src/orders.ts');
  assert.equal(f.culprit?.line, 5, JSON.stringify(f.culprit));
  assert.match(String((f.evidence.stack as string[])[0]), /^parseOrder src\/orders\.ts:5$/);
  // A file without a map stays where the stack put it.
  assert.match(String((f.evidence.stack as string[])[1]), /dist\/server\.js:8$/);
});
