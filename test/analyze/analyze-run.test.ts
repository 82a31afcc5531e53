import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeRun, heapHeldByGrowth, mergeSameCulprit } from '../../src/analyze/analyze-run.js';
import type { Finding } from '../../src/analyze/finding.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { syntheticCpuProfile } from '../fixtures/telemetry/synthetic-profile.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

const cwd = '/srv/app';

for (const noise of NOISE_LEVELS) {
  test(`analyzeRun: a healthy server gets only info findings, led by "healthy" with its headroom (noise ${noise})`, () => {
    // 30 % of the profile's samples idle, as the loop was 70 % busy.
    const cpu = syntheticCpuProfile(
      [{ name: 'handler', file: 'server.js', line: 3, share: 0.2, callee: { name: 'writev', file: '', share: 0.3 } }],
      { cwd, idleShare: 0.3 },
    );
    for (const seed of SEEDS) {
      const findings = analyzeRun(syntheticRun({ seed, noise, cwd, rps: 9000, elu: 0.7, cores: 0.7, profiles: [cpu] }));
      assert.deepEqual(
        findings.filter((f) => f.severity !== 'info').map((f) => f.code),
        [],
        `seed ${seed}`,
      );
      const healthy = findings[0];
      assert.equal(healthy.category, 'healthy', 'healthy leads the info notes');
      assert.ok((healthy.evidence.loopHeadroom as number) > 0.2);
      assert.ok((healthy.evidence.estimatedCapacityRps as number) > 9000);
    }
  });
}

test('analyzeRun: a sync crypto call and the blocking it causes become one sync-io finding first', () => {
  const cpu = syntheticCpuProfile(
    [
      {
        name: 'login',
        file: 'app.js',
        line: 14,
        share: 0.05,
        callee: { name: 'pbkdf2Sync', file: 'node:internal/crypto/pbkdf2', share: 0.85 },
      },
    ],
    { cwd },
  );
  const run = syntheticRun({
    cwd,
    rps: 100,
    elu: 0.99,
    eldP99Ms: 200,
    cores: 1,
    latencyMs: 200,
    profiles: [cpu],
    syncCalls: [
      { api: 'crypto.pbkdf2Sync', perRequest: 1, msEach: 9, site: { function: 'login', file: '/srv/app/app.js', line: 14, column: 20 } },
    ],
  });
  const findings = analyzeRun(run);
  assert.equal(findings[0].category, 'sync-io');
  assert.equal(findings[0].culprit?.function, 'login');
  assert.equal(findings.filter((f) => f.culprit?.function === 'login').length, 1);
  assert.deepEqual(
    (findings[0].evidence.alsoFound as { category: string }[]).map((x) => x.category),
    ['event-loop-blocking'],
  );
  assert.equal(
    findings.some((f) => f.category === 'healthy'),
    false,
  );
});

test('analyzeRun: an analyzer that throws becomes an info finding; the others still run', () => {
  const boom = () => {
    throw new Error('boom');
  };
  const ok = (): Finding[] => [
    { code: 'X', category: 'io-wait', severity: 'warning', title: 't', summary: 's', evidence: { a: 1 }, recommendation: 'r', impact: 0.3 },
  ];
  const findings = analyzeRun(syntheticRun({}), [boom, ok]);
  assert.deepEqual(
    findings.map((f) => f.code),
    ['X', 'HOTPATH_ANALYZER_FAILED'],
  );
});

test('analyzeRun: findings without evidence are dropped; critical leads whatever the impact', () => {
  const mk = (code: string, severity: Finding['severity'], impact: number, evidence: Record<string, unknown> = { x: 1 }): Finding => ({
    code,
    category: 'io-wait',
    severity,
    title: code,
    summary: '',
    evidence,
    recommendation: '',
    impact,
  });
  const findings = analyzeRun(syntheticRun({}), [() => [mk('W', 'warning', 0.9), mk('C', 'critical', 0.1), mk('E', 'critical', 1, {})]]);
  assert.deepEqual(
    findings.map((f) => f.code),
    ['C', 'W'],
  );
});

test('mergeSameCulprit: keeps distinct culprits apart', () => {
  const mk = (fn: string, category: Finding['category']): Finding => ({
    code: fn,
    category,
    severity: 'warning',
    title: '',
    summary: '',
    evidence: { x: 1 },
    recommendation: '',
    impact: 0.1,
    culprit: { function: fn, file: 'a.js', line: 1 },
  });
  assert.equal(mergeSameCulprit([mk('a', 'serialization'), mk('b', 'event-loop-blocking')]).length, 2);
});

test('mergeSameCulprit: loop yields in a function lead the GC pressure their promises and immediates cause there', () => {
  const mk = (code: string, category: Finding['category'], impact: number): Finding => ({
    code,
    category,
    severity: 'warning',
    title: '',
    summary: '',
    evidence: { x: 1 },
    recommendation: '',
    impact,
    culprit: { function: 'rankProducts', file: 'lib/rank.js', line: 12 },
  });
  const [kept] = mergeSameCulprit([mk('HOTPATH_GC_PRESSURE', 'gc-pressure', 0.4), mk('HOTPATH_LOOP_YIELDS', 'event-loop-blocking', 0.2)]);
  assert.equal(kept.code, 'HOTPATH_LOOP_YIELDS');
  assert.deepEqual(
    (kept.evidence.alsoFound as { code: string }[]).map((x) => x.code),
    ['HOTPATH_GC_PRESSURE'],
  );
  // Blocking work (not yields) in an allocating function stays behind the GC pressure that explains it.
  assert.equal(
    mergeSameCulprit([mk('HOTPATH_GC_PRESSURE', 'gc-pressure', 0.4), mk('HOTPATH_EVENT_LOOP_BLOCKING', 'event-loop-blocking', 0.6)])[0]
      .code,
    'HOTPATH_GC_PRESSURE',
  );
});

test('mergeSameCulprit: JSON work carrying more of the CPU than GC takes of the time leads the GC pressure its garbage causes', () => {
  const mk = (
    code: string,
    category: Finding['category'],
    evidence: Record<string, unknown>,
    severity: Finding['severity'] = 'warning',
  ): Finding => ({
    code,
    category,
    severity,
    title: '',
    summary: '',
    evidence,
    recommendation: '',
    impact: 0.7,
    culprit: { function: 'permissionsFor', file: 'lib/permissions.js', line: 11 },
  });
  // A JSON deep copy per request: 65 % of the CPU in JSON, GC 11 % of the time (a busy machine's wall time).
  const [kept] = mergeSameCulprit([
    mk('HOTPATH_GC_PRESSURE', 'gc-pressure', { gcShare: 0.11 }),
    mk('HOTPATH_SERIALIZATION', 'serialization', { jsonShare: 0.65 }, 'critical'),
  ]);
  assert.deepEqual([kept.category, kept.severity], ['serialization', 'critical']);
  assert.deepEqual(
    (kept.evidence.alsoFound as { code: string }[]).map((x) => x.code),
    ['HOTPATH_GC_PRESSURE'],
  );
  // GC taking more of the time than JSON takes of the CPU is a cost of its own, and leads.
  assert.equal(
    mergeSameCulprit([
      mk('HOTPATH_GC_PRESSURE', 'gc-pressure', { gcShare: 0.3 }),
      mk('HOTPATH_SERIALIZATION', 'serialization', { jsonShare: 0.22 }),
    ])[0].category,
    'gc-pressure',
  );
});

test('mergeSameCulprit: avoidable blocking work carrying more of the CPU than GC takes of the time leads the GC pressure it causes', () => {
  const mk = (code: string, category: Finding['category'], evidence: Record<string, unknown>): Finding => ({
    code,
    category,
    severity: 'warning',
    title: '',
    summary: '',
    evidence,
    recommendation: '',
    impact: 0.7,
    culprit: { function: 'search', file: 'lib/catalog.js', line: 6 },
  });
  // Regexp replaces per item: 67 % of the samples, GC 12.5 % of the time on a busy machine.
  const [kept] = mergeSameCulprit([
    mk('HOTPATH_GC_PRESSURE', 'gc-pressure', { gcShare: 0.125 }),
    mk('HOTPATH_EVENT_LOOP_BLOCKING', 'event-loop-blocking', { work: 'regex', avoidableShare: 0.67 }),
  ]);
  assert.equal(kept.code, 'HOTPATH_EVENT_LOOP_BLOCKING');
  assert.deepEqual(
    (kept.evidence.alsoFound as { code: string }[]).map((x) => x.code),
    ['HOTPATH_GC_PRESSURE'],
  );
  // Plain app code (no avoidable work) allocating: GC is the finding; and GC above the avoidable share leads.
  for (const blocking of [{ work: 'app' }, { work: 'regex', avoidableShare: 0.2 }])
    assert.equal(
      mergeSameCulprit([
        mk('HOTPATH_GC_PRESSURE', 'gc-pressure', { gcShare: 0.3 }),
        mk('HOTPATH_EVENT_LOOP_BLOCKING', 'event-loop-blocking', blocking),
      ])[0].code,
      'HOTPATH_GC_PRESSURE',
    );
});

test('mergeSameCulprit: a function and the anonymous functions written inside it are one culprit', () => {
  const mk = (fn: string, category: Finding['category'], file = 'a.js'): Finding => ({
    code: category,
    category,
    severity: 'warning',
    title: '',
    summary: '',
    evidence: { x: 1 },
    recommendation: '',
    impact: 0.1,
    culprit: { function: fn, file, line: 1 },
  });
  const [merged, ...rest] = mergeSameCulprit([
    mk('compileTemplate', 'event-loop-blocking'),
    mk('(anonymous in compileTemplate)', 'serialization'),
  ]);
  assert.deepEqual(rest, []);
  assert.equal((merged.evidence.alsoFound as unknown[]).length, 1);
  assert.equal(
    mergeSameCulprit([mk('f', 'serialization'), mk('(anonymous in f)', 'event-loop-blocking', 'b.js')]).length,
    2,
    'another file',
  );
});

test('mergeSameCulprit: the kept finding is the most specific actionable one, at the group severity', () => {
  const mk = (category: Finding['category'], severity: Finding['severity'], evidence: Record<string, unknown> = { x: 1 }): Finding => ({
    code: category,
    category,
    severity,
    title: '',
    summary: '',
    evidence,
    recommendation: '',
    impact: 0.2,
    culprit: { function: 'f', file: 'a.js', line: 1 },
  });
  assert.equal(mergeSameCulprit([mk('gc-pressure', 'info'), mk('event-loop-blocking', 'critical')])[0].category, 'event-loop-blocking');
  assert.equal(mergeSameCulprit([mk('gc-pressure', 'warning'), mk('event-loop-blocking', 'warning')])[0].category, 'gc-pressure');
  const gcInBlocking = mergeSameCulprit([mk('gc-pressure', 'warning'), mk('event-loop-blocking', 'critical')])[0];
  assert.equal(gcInBlocking.category, 'gc-pressure');
  assert.equal(gcInBlocking.severity, 'critical');
  assert.equal(
    mergeSameCulprit([mk('event-loop-blocking', 'warning', { work: 'json' }), mk('serialization', 'warning')])[0].category,
    'serialization',
  );
  assert.equal(
    mergeSameCulprit([mk('event-loop-blocking', 'warning', { work: 'crypto' }), mk('serialization', 'warning')])[0].category,
    'event-loop-blocking',
  );
});

test('mergeSameCulprit: findings without a culprit about work no app code ran are one by where it ran', () => {
  const mk = (category: Finding['category'], evidence: Record<string, unknown>): Finding => ({
    code: category,
    category,
    severity: 'critical',
    title: '',
    summary: '',
    evidence,
    recommendation: '',
    impact: 0.5,
  });
  const site = { noAppCode: true, workSource: 'node_modules/body-parser/lib/types/json.js:93' };
  const [merged, ...rest] = mergeSameCulprit([mk('event-loop-blocking', { ...site, work: 'json' }), mk('serialization', site)]);
  assert.deepEqual(rest, []);
  assert.equal(merged.category, 'serialization');
  assert.equal((merged.evidence.alsoFound as unknown[]).length, 1);
  // Elsewhere, or without the mark: apart, as findings without a culprit always were.
  assert.equal(
    mergeSameCulprit([mk('event-loop-blocking', { ...site, work: 'json' }), mk('serialization', { ...site, workSource: 'x.js:1' })]).length,
    2,
  );
  assert.equal(mergeSameCulprit([mk('event-loop-blocking', { x: 1 }), mk('serialization', { x: 1 })]).length, 2);
});

test('mergeSameCulprit: latency creep in a function yields to the sync call a hook saw there, not to findings read from the profile', () => {
  const mk = (code: string, category: Finding['category'], severity: Finding['severity']): Finding => ({
    code,
    category,
    severity,
    title: '',
    summary: '',
    evidence: { x: 1 },
    recommendation: '',
    impact: 0.2,
    culprit: { function: 'f', file: 'a.js', line: 1 },
  });
  const creep = mk('HOTPATH_LATENCY_CREEP', 'handler-growth', 'warning');
  const sync = mergeSameCulprit([creep, mk('HOTPATH_SYNC_IO', 'sync-io', 'critical')])[0];
  assert.equal(sync.category, 'sync-io');
  assert.equal(sync.severity, 'critical');
  assert.deepEqual(
    (sync.evidence.alsoFound as { code: string }[]).map((x) => x.code),
    ['HOTPATH_LATENCY_CREEP'],
  );
  assert.equal(
    mergeSameCulprit([mk('HOTPATH_EVENT_LOOP_BLOCKING', 'event-loop-blocking', 'critical'), creep])[0].code,
    'HOTPATH_LATENCY_CREEP',
  );
  assert.equal(mergeSameCulprit([mk('HOTPATH_GC_PRESSURE', 'gc-pressure', 'warning'), creep])[0].code, 'HOTPATH_LATENCY_CREEP');
  assert.equal(mergeSameCulprit([mk('HOTPATH_HANDLER_GROWTH', 'handler-growth', 'warning'), creep])[0].code, 'HOTPATH_HANDLER_GROWTH');
});

test('analyzeRun: non-finite evidence survives JSON: ±Infinity as strings, NaN as null, at any depth', () => {
  const odd = (): Finding[] => [
    {
      code: 'X',
      category: 'io-wait',
      severity: 'warning',
      title: 't',
      summary: 's',
      recommendation: 'r',
      impact: 0.3,
      evidence: { growth: Infinity, drop: -Infinity, fit: NaN, nested: { ratio: Infinity, list: [1, NaN] }, plain: 2.5 },
    },
  ];
  const [f] = analyzeRun(syntheticRun({}), [odd]);
  const expected = { growth: 'Infinity', drop: '-Infinity', fit: null, nested: { ratio: 'Infinity', list: [1, null] }, plain: 2.5 };
  assert.deepEqual(f.evidence, expected);
  assert.deepEqual(JSON.parse(JSON.stringify(f.evidence)), expected, 'a JSON round trip keeps every value');
});

test('analyzeRun: a saturated but cheap server stays healthy and points at the function carrying most of its CPU', () => {
  const cpu = syntheticCpuProfile(
    [
      {
        name: 'issueSession',
        file: 'lib/session.js',
        line: 3,
        share: 0.15,
        callee: { name: 'deriveToken', file: 'node_modules/slowlib/index.js', share: 0.6 },
      },
      { name: 'handler', file: 'server.js', line: 6, share: 0.05 },
    ],
    { cwd, idleShare: 0 },
  );
  const findings = analyzeRun(syntheticRun({ seed: 1, cwd, rps: 5600, elu: 1, eldP99Ms: 5, cores: 1, latencyMs: 4, profiles: [cpu] }));
  const [healthy] = findings;
  assert.equal(healthy.category, 'healthy', findings.map((f) => f.code).join());
  assert.equal(healthy.culprit, undefined, 'nothing is wrong: no culprit');
  assert.equal(healthy.evidence.topFunction, 'issueSession (lib/session.js:3)');
  assert.match(healthy.summary, /7\d % of the CPU goes to issueSession \(lib\/session\.js:3\): the place to start/);
  // With headroom left, or no function carrying most of the CPU, there is nothing to point at.
  const halfIdle = syntheticCpuProfile([{ name: 'issueSession', file: 'lib/session.js', line: 3, share: 0.45 }], { cwd, idleShare: 0.5 });
  const idle = analyzeRun(syntheticRun({ seed: 1, cwd, rps: 3000, elu: 0.5, cores: 0.5, profiles: [halfIdle] }))[0];
  assert.equal(idle.evidence.topFunction, undefined);
  const spread = syntheticCpuProfile(
    [
      { name: 'a', file: 'a.js', line: 1, share: 0.3 },
      { name: 'b', file: 'b.js', line: 1, share: 0.3 },
    ],
    { cwd, idleShare: 0 },
  );
  assert.equal(
    analyzeRun(syntheticRun({ seed: 1, cwd, rps: 5600, elu: 1, cores: 1, profiles: [spread] }))[0].evidence.topFunction,
    undefined,
  );
});

test("analyzeRun: with a CPU profile, the loop's utilization comes from its idle samples, not ELU (which a profile inflates)", () => {
  // ELU read 0.64 on a server whose profile was 97 % idle: libuv loses idle time to the profiler's signal.
  const cpu = syntheticCpuProfile([{ name: 'handler', file: 'server.js', line: 3, share: 0.03 }], { cwd, idleShare: 0.97 });
  const [healthy] = analyzeRun(syntheticRun({ seed: 1, cwd, rps: 100, elu: 0.64, cores: 0.03, latencyMs: 1, profiles: [cpu] }));
  assert.equal(healthy.category, 'healthy');
  assert.ok((healthy.evidence.eluMean as number) < 0.05, String(healthy.evidence.eluMean));
  assert.doesNotMatch(healthy.summary, /Other processes competed/);
  // A profile without idle samples while ELU says the loop had time to spare is not trusted.
  const noIdle = syntheticCpuProfile([{ name: 'handler', file: 'server.js', line: 3, share: 0.5 }], { cwd, idleShare: 0 });
  const [h2] = analyzeRun(syntheticRun({ seed: 1, cwd, rps: 100, elu: 0.3, cores: 0.3, latencyMs: 1, profiles: [noIdle] }));
  assert.ok(Math.abs((h2.evidence.eluMean as number) - 0.3) < 0.05, String(h2.evidence.eluMean));
});

test("analyzeRun: in a cluster each worker's utilization comes from its own profile's idle samples", () => {
  // Two workers, both 97 % idle in their profiles while ELU (inflated by the profiler) read 0.64.
  const first = syntheticCpuProfile([{ name: 'handler', file: 'server.js', line: 3, share: 0.03 }], { cwd, idleShare: 0.97 });
  const second = {
    ...syntheticCpuProfile([{ name: 'handler', file: 'server.js', line: 3, share: 0.03 }], { cwd, idleShare: 0.97 }),
    pid: 4343,
  };
  const one = syntheticRun({ seed: 1, cwd, rps: 100, elu: 0.64, cores: 0.03, latencyMs: 1, profiles: [first, second] });
  const run = { ...one, threads: [...one.threads, { ...one.threads[0], pid: 4343 }] };
  const [healthy] = analyzeRun(run);
  assert.equal(healthy.category, 'healthy');
  assert.ok((healthy.evidence.eluMean as number) < 0.05, `both workers idle: ${String(healthy.evidence.eluMean)}`);
  // A worker without a profile keeps its ELU: the mean is over both.
  const [mixed] = analyzeRun({ ...run, profiles: [first] });
  assert.ok(Math.abs((mixed.evidence.eluMean as number) - (0.03 + 0.64) / 2) < 0.05, String(mixed.evidence.eluMean));
});

test('heapHeldByGrowth: heap growth a timer or listener leak can hold is its symptom; a larger one stands alone', () => {
  const heap = (bytesPerRequest: number): Finding => ({
    code: 'HOTPATH_MEMORY_LEAK',
    category: 'memory-leak',
    severity: 'critical',
    title: 'The heap keeps growing after garbage collection',
    summary: 'Heap grew.',
    evidence: { bytesPerRequest },
    recommendation: 'r',
    impact: 0.05,
  });
  const timers: Finding = {
    code: 'HOTPATH_TIMER_LEAK',
    category: 'timer-leak',
    severity: 'warning',
    title: 'SetTimeout timers pile up',
    summary: 's',
    evidence: { perRequest: 0.98 },
    recommendation: 'r',
    impact: 0.05,
    culprit: { function: 'armRequestTimeout', file: 'lib/guard.js', line: 5 },
  };
  const [first, second] = heapHeldByGrowth([heap(2400), timers]).sort((a, b) => a.severity.localeCompare(b.severity));
  assert.deepEqual([first.category, first.severity], ['timer-leak', 'critical'], "the cause takes the heap's severity");
  assert.deepEqual([second.category, second.severity, second.evidence.heldBy], ['memory-leak', 'warning', 'HOTPATH_TIMER_LEAK']);
  assert.match(second.summary, /Most likely what holds it: setTimeout timers pile up \(timer-leak\)/);
  // 16 KB per request cannot sit in one timer's closure: a leak of its own.
  assert.deepEqual(
    heapHeldByGrowth([heap(16_000), timers]).map((f) => f.severity),
    ['critical', 'warning'],
  );
  // A rare registration (one per 50 requests) holds nothing worth naming.
  assert.deepEqual(
    heapHeldByGrowth([heap(100), { ...timers, evidence: { perRequest: 0.02 } }]).map((f) => f.severity),
    ['critical', 'warning'],
  );
  // 19 KB per request allocated in the file that registers a timer per request: the timers' closures hold it.
  const captured = { ...heap(19_000), culprit: { function: '(anonymous)', file: 'lib/guard.js', line: 3 } };
  const [cause, symptom] = heapHeldByGrowth([captured, timers]).sort((a, b) => a.severity.localeCompare(b.severity));
  assert.deepEqual([cause.category, cause.severity, symptom.evidence.heldBy], ['timer-leak', 'critical', 'HOTPATH_TIMER_LEAK']);
  // Allocated elsewhere, or one registration in four: a leak of its own.
  const elsewhere = { ...captured, culprit: { ...captured.culprit, file: 'lib/cache.js' } };
  assert.deepEqual(
    heapHeldByGrowth([elsewhere, timers]).map((f) => f.severity),
    ['critical', 'warning'],
  );
  assert.deepEqual(
    heapHeldByGrowth([captured, { ...timers, evidence: { perRequest: 0.25 } }]).map((f) => f.severity),
    ['critical', 'warning'],
  );
});

test('heapHeldByGrowth: heap growth next to a module reloaded per request is its symptom, whatever its size', () => {
  const heap: Finding = {
    code: 'HOTPATH_MEMORY_LEAK',
    category: 'memory-leak',
    severity: 'critical',
    title: 'The heap keeps growing after garbage collection',
    summary: 'Heap grew.',
    evidence: { bytesPerRequest: 91_000 },
    recommendation: 'r',
    impact: 0.05,
  };
  const reload: Finding = {
    code: 'HOTPATH_SYNC_IO',
    category: 'sync-io',
    severity: 'critical',
    title: 'require() reloads a module on the request path, blocking the event loop',
    summary: 's',
    evidence: { reloadsModule: true, callsPerRequest: 1 },
    recommendation: 'r',
    impact: 0.3,
    culprit: { function: 'loadPlans', file: 'lib/plans.js', line: 8 },
  };
  const [first, second] = heapHeldByGrowth([heap, reload]);
  assert.deepEqual([first.severity, first.evidence.heldBy], ['warning', 'HOTPATH_SYNC_IO']);
  assert.match(first.summary, /Most likely what holds it: require\(\) reloads a module .*each reload leaves a new Module/);
  assert.equal(second.severity, 'critical');
  // A plain synchronous read holds nothing.
  assert.equal(heapHeldByGrowth([heap, { ...reload, evidence: { callsPerRequest: 1 } }])[0].severity, 'critical');
});

test('mergeSameCulprit: of two equally specific findings on one function, the costlier leads', () => {
  const mk = (code: string, impact: number): Finding => ({
    code,
    category: 'sync-io',
    severity: 'critical',
    title: code,
    summary: '',
    evidence: { x: 1 },
    recommendation: '',
    impact,
    culprit: { function: 'latestUpload', file: 'lib/uploads.js', line: 20 },
  });
  const [merged] = mergeSameCulprit([mk('readdirSync', 0.17), mk('statSync', 0.5)]);
  assert.equal(merged.code, 'statSync');
  assert.deepEqual(
    (merged.evidence.alsoFound as { title: string }[]).map((x) => x.title),
    ['readdirSync'],
  );
});

test('heapHeldByGrowth: heap growth next to handles left open is their symptom; the handle leak is no heap growth itself', () => {
  const heap: Finding = {
    code: 'HOTPATH_MEMORY_LEAK',
    category: 'memory-leak',
    severity: 'warning',
    title: 'The heap keeps growing after garbage collection',
    summary: 'Heap grew.',
    evidence: { bytesPerRequest: 1300 },
    recommendation: 'r',
    impact: 0.05,
  };
  const sockets: Finding = {
    code: 'HOTPATH_HANDLE_LEAK',
    category: 'memory-leak',
    severity: 'critical',
    title: 'TCP sockets pile up without being closed',
    summary: 's',
    evidence: { perRequest: 0.95 },
    recommendation: 'r',
    impact: 0.05,
    culprit: { function: 'sendMetric', file: 'lib/metrics.js', line: 10 },
  };
  // The handle leak first: it must not be taken for the heap growth.
  const [first, second] = heapHeldByGrowth([sockets, heap]);
  assert.deepEqual([first.code, first.severity], ['HOTPATH_HANDLE_LEAK', 'critical']);
  assert.equal(second.evidence.heldBy, 'HOTPATH_HANDLE_LEAK');
  assert.match(second.summary, /Most likely what holds it: TCP sockets pile up without being closed \(a handle leak\)/);
});

test('mergeSameCulprit: a handle leak and heap growth blamed on one function keep the handle leak, which says what the heap holds', () => {
  const culprit = { function: 'getConfig', file: 'lib/config.js', line: 11 };
  const heap: Finding = {
    code: 'HOTPATH_MEMORY_LEAK',
    category: 'memory-leak',
    severity: 'critical',
    title: 'heap',
    summary: '',
    evidence: { x: 1 },
    recommendation: '',
    impact: 0.4,
    culprit,
  };
  const watchers: Finding = {
    code: 'HOTPATH_HANDLE_LEAK',
    category: 'memory-leak',
    severity: 'critical',
    title: 'watchers',
    summary: '',
    evidence: { x: 1 },
    recommendation: '',
    impact: 0.05,
    culprit,
  };
  for (const order of [
    [heap, watchers],
    [watchers, heap],
  ]) {
    const [merged, ...rest] = mergeSameCulprit(order);
    assert.deepEqual(rest, []);
    assert.equal(merged.code, 'HOTPATH_HANDLE_LEAK');
    assert.deepEqual(
      (merged.evidence.alsoFound as { code: string }[]).map((x) => x.code),
      ['HOTPATH_MEMORY_LEAK'],
    );
  }
});

test('heapHeldByGrowth: heap growth beside code compiled per request is its symptom; blocking on other work is not', () => {
  const heap: Finding = {
    code: 'HOTPATH_MEMORY_LEAK',
    category: 'memory-leak',
    severity: 'critical',
    title: 'The heap keeps growing after garbage collection',
    summary: 'Heap grew.',
    evidence: { bytesPerRequest: 2056 },
    recommendation: 'r',
    impact: 0.05,
  };
  const blocking = (work: string): Finding => ({
    code: 'HOTPATH_EVENT_LOOP_BLOCKING',
    category: 'event-loop-blocking',
    severity: 'warning',
    title: 'evaluateRule blocks the event loop (compiling code)',
    summary: 's',
    evidence: { work },
    recommendation: 'r',
    impact: 0.3,
    culprit: { function: 'evaluateRule', file: 'lib/discounts.js', line: 12 },
  });
  const out = heapHeldByGrowth([heap, blocking('compile')]);
  assert.deepEqual(
    out.map((f) => [f.category, f.severity]),
    [
      ['memory-leak', 'warning'],
      ['event-loop-blocking', 'critical'],
    ],
  );
  assert.equal(out[0].evidence.heldBy, 'HOTPATH_EVENT_LOOP_BLOCKING');
  assert.match(out[0].summary, /code compiled per request/);
  // Blocking on hashing holds nothing: the leak stands alone.
  assert.deepEqual(
    heapHeldByGrowth([heap, blocking('crypto')]).map((f) => f.severity),
    ['critical', 'warning'],
  );
});
