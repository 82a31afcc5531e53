// `hotpath compare` on real runs: the same example twice is no significant difference; the
// pbkdf2Sync login example against its fixed twin (async pbkdf2) shows the culprit's CPU per
// request gone and its finding resolved; a real 2x fix (a handler doing half the work) is
// significant; damaged or mismatched run directories get a coded error or a partial comparison.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, runCli, tempOut } from '../run/helpers/run-cli.js';
import type { Comparison } from '../../src/report/compare-schema.js';
import { pathToFileURL } from 'node:url';
import { hook, launch, openReport } from '../report/html/browser.js';
import { DIFF_NEUTRAL, GAIN_COLORS } from '../../src/report/ui/flame/diff-colors.js';

const { out, cleanup } = tempOut();
const pbkdf2 = join(root, 'examples', 'express-pbkdf2-login');
const fixed = join(root, 'test', 'fixtures', 'compare', 'express-pbkdf2-login-fixed');
const cpuWork = join(root, 'test', 'fixtures', 'compare', 'cpu-work');

/** One short real run of `node server.js` in `cwd`; its run directory. */
async function runIn(cwd: string, name: string, flags: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const dest = join(out, name);
  const r = await runCli(['run', '-d', '3', '--out', dest, ...flags, '--', 'node', 'server.js'], {
    cwd,
    env: { PORT: '0', ...env },
    timeoutMs: 120_000,
  });
  assert.ok(existsSync(dest) && readdirSync(dest).length === 1, `hotpath run exited ${r.code}\n${r.stderr}`);
  return join(dest, readdirSync(dest)[0]);
}

const login = ['-c', '20', '--scenario', 'login.json', '--setup', 'setup.json'];
let syncA: string;
let syncB: string;
let async_: string;

async function compare(args: string[]): Promise<{ code: number | null; stderr: string; c?: Comparison }> {
  const r = await runCli(['compare', '--json', ...args], { timeoutMs: 60_000 });
  let c: Comparison | undefined;
  try {
    c = JSON.parse(r.stdout) as Comparison;
  } catch {
    /* an error: no JSON */
  }
  return { code: r.code, stderr: r.stderr, ...(c ? { c } : {}) };
}

before(
  async () => {
    syncA = await runIn(pbkdf2, 'sync-a', login);
    syncB = await runIn(pbkdf2, 'sync-b', login);
    async_ = await runIn(fixed, 'async', login);
  },
  { timeout: 400_000 },
);
after(cleanup);

test('two runs of the same example: no significant difference', { timeout: 60_000 }, async () => {
  const { code, c, stderr } = await compare([syncA, syncB]);
  assert.equal(code, 0, stderr);
  assert.ok(c);
  // The machine (the shares of a CPU the two runs' loops got) is in every message: two identical
  // runs read +21 % throughput once on CI, when compare had no measure of it.
  const machine = JSON.stringify(c.machine ?? 'not measured');
  for (const m of c.load) assert.ok(m.verdict !== 'better' && m.verdict !== 'worse', `${m.name}: ${JSON.stringify(m)}; machine ${machine}`);
  const throughput = c.load.find((m) => m.name === 'throughput');
  assert.equal(throughput?.verdict, 'no significant difference', `${JSON.stringify(throughput)}; machine ${machine}`);
  assert.ok(existsSync(join(syncB, 'compare.md')) && existsSync(join(syncB, 'compare.json')));
});

test('pbkdf2Sync login against its async twin: the culprit drops per request, the finding is resolved', { timeout: 60_000 }, async () => {
  const { code, c, stderr } = await compare([syncA, async_]);
  assert.equal(code, 0, stderr);
  assert.ok(c?.functions, JSON.stringify(c?.missing));
  const loginRow = c.functions.find((f) => f.function === 'login' && f.file === 'app.js');
  assert.ok(loginRow, JSON.stringify(c.functions.slice(0, 5)));
  assert.equal(c.functions[0].kind, 'app', 'app code first');
  // pbkdf2Sync's hashing was charged to login; the async twin hashes in the thread pool.
  assert.ok(loginRow.selfAfterUs < loginRow.selfBeforeUs * 0.3, JSON.stringify(loginRow));
  assert.ok(loginRow.selfBeforeUs > 1000, `a pbkdf2 of 10,000 rounds costs milliseconds per request: ${JSON.stringify(loginRow)}`);
  assert.ok(
    c.findings.resolved.some((f) => f.code === 'HOTPATH_SYNC_IO' && f.culprit?.function === 'login'),
    JSON.stringify(c.findings),
  );
  assert.ok(!c.findings.new.some((f) => f.code === 'HOTPATH_SYNC_IO'), JSON.stringify(c.findings.new));
  const md = readFileSync(join(async_, 'compare.md'), 'utf8');
  // The async twin's login may take no sample at all (a few µs a request): then it is marked as gone.
  assert.match(md, /`login`( \(vanished\))? \| app\.js/);
  assert.match(md, /Resolved/);
  const elu = c.telemetry.find((m) => m.name === 'event-loop utilization');
  assert.ok(elu && elu.after < elu.before, JSON.stringify(elu));
});

test(
  'compare.html: a differential flame graph in headless Chromium, the culprit in the gain colours, before and after per request on hover',
  { timeout: 90_000 },
  async () => {
    const { code, c, stderr } = await compare([syncA, async_]);
    assert.equal(code, 0, stderr);
    const loginRow = c?.functions?.find((f) => f.function === 'login' && f.file === 'app.js');
    assert.ok(loginRow, JSON.stringify(c?.functions?.slice(0, 5)));
    const file = join(async_, 'compare.html');
    assert.ok(existsSync(file));
    const browser = await launch();
    try {
      const opened = await openReport(browser, file);
      const s = await hook(opened.page);
      assert.deepEqual(s.errors, []);
      assert.deepEqual(opened.consoleErrors, []);
      assert.deepEqual(opened.requests, [pathToFileURL(file).href], 'offline: the page requests nothing but itself');
      assert.ok(s.diff && s.diff.visibleFrames > 10, JSON.stringify(s.diff?.visibleFrames));
      // Per request, the login path's total equals what compare.json says of login (same profiles, same requests).
      const login = s.diff.frames.find((f) => f.name === 'login' && f.file === 'app.js');
      assert.ok(login, JSON.stringify(s.diff.frames.slice(0, 20).map((f) => f.name)));
      assert.ok(
        Math.abs(login.totalBeforeUs - loginRow.totalBeforeUs) <= 0.05 * loginRow.totalBeforeUs,
        `${login.totalBeforeUs} vs ${loginRow.totalBeforeUs}`,
      );
      assert.ok(login.totalAfterUs < login.totalBeforeUs * 0.3, JSON.stringify(login));
      // Coloured by the change of self time per request: the hashing under login is the largest
      // change of all, a gain, so it is drawn in the strongest gain shade.
      const change = (f: { selfBeforeUs: number; selfAfterUs: number }) => f.selfAfterUs - f.selfBeforeUs;
      const largest = [...s.diff.frames].sort((a, b) => Math.abs(change(b)) - Math.abs(change(a)))[0];
      assert.ok(
        largest.y > login.y && largest.x >= login.x - 1 && largest.x + largest.w <= login.x + login.w + 1,
        `under login: ${JSON.stringify(largest)}`,
      );
      assert.ok(largest.selfBeforeUs > 1000 && largest.selfAfterUs < largest.selfBeforeUs * 0.3, JSON.stringify(largest));
      assert.equal(largest.color, GAIN_COLORS[GAIN_COLORS.length - 1]);
      assert.ok(
        s.diff.frames.some((f) => f.color === DIFF_NEUTRAL),
        'frames that did not change are neutral',
      );
      const hashing = largest;
      // Hovering login gives its time per request before and after.
      const box = await opened.page.locator('#diff-flame canvas').boundingBox();
      assert.ok(box);
      await opened.page.mouse.move(box.x + login.x + login.w / 2, box.y + login.y);
      const tip = (await hook(opened.page)).diff?.tooltip ?? '';
      assert.match(tip, /^login\b/);
      assert.match(tip, /total per request: before \d+(\.\d)? ms, after \d+(\.\d)? (µs|ms), −/);
      // Width by the after run only: the vanished hashing is no longer drawn.
      await opened.page.selectOption('#diff-flame select[aria-label=width]', 'after');
      const after_ = await hook(opened.page);
      assert.equal(after_.diff?.widthBy, 'after');
      assert.ok(after_.diff && after_.diff.frames.length > 10);
      assert.deepEqual(
        after_.diff.frames.filter((f) => f.totalAfterUs === 0).map((f) => f.name),
        [],
        'only what ran after is drawn',
      );
      assert.ok(!after_.diff.frames.some((f) => f.name === hashing.name && f.file === hashing.file && f.y === hashing.y));
    } finally {
      await browser.close();
    }
  },
);

test('a real 2x fix (half the work per request) is significant: throughput better, p50 better', { timeout: 200_000 }, async () => {
  const slow = await runIn(cpuWork, 'work-4', ['-c', '4'], { WORK: '4' });
  const fast = await runIn(cpuWork, 'work-2', ['-c', '4'], { WORK: '2' });
  const { code, c, stderr } = await compare([slow, fast]);
  assert.equal(code, 0, stderr);
  assert.ok(c);
  const throughput = c.load.find((m) => m.name === 'throughput')!;
  const p50 = c.load.find((m) => m.name === 'latency p50');
  const cpu = c.telemetry.find((m) => m.name === 'CPU per request');
  const seen = `throughput ${JSON.stringify(throughput)}; p50 ${JSON.stringify(p50)}; CPU per request ${JSON.stringify(cpu)}; machine ${JSON.stringify(c.machine ?? 'not measured')}`;
  // Per request, the work halves whatever CPU the machine gave each run: the profile and the CPU time.
  // The handler's total, render included: V8 inlines render into handle in some runs and not in
  // others (once read handle 2.35 ms self before, 0.31 ms after, render the other way round).
  const handle = c.functions?.find((f) => f.function === 'handle');
  assert.ok(handle && handle.totalAfterUs < handle.totalBeforeUs * 0.75, JSON.stringify(c.functions?.slice(0, 3)));
  assert.ok(cpu?.change !== undefined && cpu.change < -0.25, seen);
  // Judged at equal CPU share when both loops were saturated (c.machine): on this 2-core machine at
  // load 11-22 the slow run's loop got 0.37-0.54 of its busy time on a CPU and the fast run's
  // 0.28-0.39 (its load generator, twice as busy, competes with it): the 2x fix read +25 to +69 %
  // in raw throughput, 1.7-2.2x at equal share.
  assert.equal(throughput.verdict, 'better', seen);
  assert.ok(throughput.change! > 0.2, seen);
  assert.equal(p50?.verdict, 'better', seen);
});

/** A copy of a run directory to damage. */
function copyRun(from: string, name: string): string {
  const to = join(out, 'damaged', name);
  cpSync(from, to, { recursive: true });
  rmSync(join(to, 'compare.json'), { force: true });
  rmSync(join(to, 'compare.md'), { force: true });
  return to;
}

test('a run without its CPU profile: a partial comparison that says what is missing', { timeout: 60_000 }, async () => {
  const dir = copyRun(async_, 'no-profile');
  for (const f of readdirSync(dir)) if (f.endsWith('.cpuprofile')) rmSync(join(dir, f));
  const { code, c, stderr } = await compare([syncA, dir]);
  assert.equal(code, 0, stderr);
  assert.ok(c, stderr);
  assert.equal(c.functions, undefined);
  assert.ok(
    c.missing.some((m) => /after run has no CPU profile/.test(m)),
    JSON.stringify(c.missing),
  );
  assert.ok(c.load.length > 0);
  assert.match(readFileSync(join(dir, 'compare.md'), 'utf8'), /### Missing/);
});

test('a run without load results: HOTPATH_ERR_COMPARE_NO_LOAD, exit 1', { timeout: 60_000 }, async () => {
  const dir = copyRun(syncB, 'no-load');
  rmSync(join(dir, 'load.json'));
  const { code, stderr, c } = await compare([dir, syncA]);
  assert.equal(code, 1);
  assert.equal(c, undefined);
  assert.match(stderr, /HOTPATH_ERR_COMPARE_NO_LOAD/);
  assert.match(stderr, /before run/);
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
});

test(
  'runs of different requests: HOTPATH_ERR_COMPARE_MISMATCH, or a comparison listing them with --allow-mismatch',
  { timeout: 60_000 },
  async () => {
    const dir = copyRun(syncB, 'other-path');
    const load = JSON.parse(readFileSync(join(dir, 'load.json'), 'utf8')) as { url: string; options: { method: string } };
    load.url = new URL('/other', load.url).href;
    load.options.method = 'GET';
    writeFileSync(join(dir, 'load.json'), JSON.stringify(load));
    const refused = await compare([syncA, dir]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /HOTPATH_ERR_COMPARE_MISMATCH/);
    assert.match(refused.stderr, /request path/);
    const allowed = await compare(['--allow-mismatch', syncA, dir]);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.ok(allowed.c?.mismatches.some((m) => m.startsWith('request path')));
  },
);

test('a path that is no run directory, or one directory only: coded errors', { timeout: 60_000 }, async () => {
  const none = await compare([join(out, 'nowhere'), syncA]);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /HOTPATH_ERR_RUN_DIR/);
  const one = await compare([syncA]);
  assert.equal(one.code, 2);
  assert.match(one.stderr, /HOTPATH_ERR_MISSING_ARGUMENT/);
});
