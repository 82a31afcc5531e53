// Issues 23.9 and 23.10: `hotpath run` refuses bad input before it starts anything (no target
// spawned, no run directory left), with a coded error and one exit-code rule (2 for bad input,
// docs/errors.md); directories it cannot write are coded errors, not "a bug in hotpath".
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apps, runCli } from '../run/helpers/run-cli.js';

const work = mkdtempSync(join(tmpdir(), 'hotpath-bad-input-'));
after(() => rmSync(work, { recursive: true, force: true }));

const badScenario = join(work, 'bad-scenario.json');
writeFileSync(badScenario, JSON.stringify([{ method: 'GET', path: 'no-slash' }]));
const notJson = join(work, 'not-json.json');
writeFileSync(notJson, '[{');

const cases: [string, string[], string][] = [
  ['-H without a colon', ['-H', 'no colon here'], 'HOTPATH_ERR_INVALID_OPTION'],
  ['-m that is not a method', ['-m', 'GET /x'], 'HOTPATH_ERR_INVALID_OPTION'],
  ['--scenario with a bad entry', ['--scenario', badScenario], 'HOTPATH_ERR_SCENARIO'],
  ['--scenario missing', ['--scenario', join(work, 'nope.json')], 'HOTPATH_ERR_SCENARIO'],
  ['--setup not JSON', ['--setup', notJson], 'HOTPATH_ERR_SCENARIO'],
  ['--body-file missing', ['-m', 'POST', '--body-file', join(work, 'nope.bin')], 'HOTPATH_ERR_BODY_FILE'],
  ['--body-file a directory', ['-m', 'POST', '--body-file', work], 'HOTPATH_ERR_BODY_FILE'],
  ['--pipelining with Connection: close', ['-p', '4', '-H', 'Connection: close'], 'HOTPATH_ERR_INVALID_OPTION'],
];

for (const [what, args, code] of cases) {
  test(`issue 23.9/23.10: ${what}: ${code}, exit 2, before the target starts, no run directory`, async () => {
    const mark = join(work, `mark-${code}-${Math.random().toString(36).slice(2)}`);
    const out = join(work, `out-${Math.random().toString(36).slice(2)}`);
    const r = await runCli(['run', '-d', '1', '-o', out, ...args, '--', 'node', join(apps, 'marks-start.cjs')], {
      env: { MARK_FILE: mark },
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`error ${code}:`));
    assert.doesNotMatch(r.stderr, /This is a bug|\n\s+at .+:\d+:\d+/);
    assert.ok(!existsSync(mark), 'the target was started');
    assert.ok(!existsSync(out) || readdirSync(out).length === 0, 'a run directory was left behind');
  });
}

test('issue 23.9: an --hdr-log that cannot be written is refused before the target starts (HOTPATH_ERR_HDR_LOG, exit 1)', async () => {
  const mark = join(work, 'mark-hdr');
  const out = join(work, 'out-hdr');
  const r = await runCli(
    ['run', '-d', '1', '-o', out, '--hdr-log', join(work, 'no', 'such', 'dir', 'x.hlog'), '--', 'node', join(apps, 'marks-start.cjs')],
    { env: { MARK_FILE: mark }, timeoutMs: 30_000 },
  );
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /error HOTPATH_ERR_HDR_LOG:/);
  assert.ok(!existsSync(mark), 'the target was started');
  assert.ok(!existsSync(out) || readdirSync(out).length === 0);
});

/** A directory nothing can be created in: /sys for root (permissions do not stop root), else a 0500 one. */
function unwritableDir(): string {
  if (process.getuid?.() === 0) return '/sys';
  const dir = join(work, 'read-only');
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o500);
  return dir;
}

test('issue 23.10: an --out where no run directory can be created is HOTPATH_ERR_OUT_DIR, not a bug', async () => {
  const r = await runCli(['run', '-d', '1', '-o', unwritableDir(), '--', 'node', join(apps, 'marks-start.cjs')], {
    env: { MARK_FILE: join(work, 'mark-out') },
    timeoutMs: 30_000,
  });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /error HOTPATH_ERR_OUT_DIR: Cannot create a run directory in/);
  assert.doesNotMatch(r.stderr, /This is a bug/);
});

test('issue 23.10: hotpath report on a run directory it cannot write is HOTPATH_ERR_RUN_DIR, not a bug', async () => {
  const dir = join(work, 'run-copy');
  // Any readable run directory will do: make one with a quick run, then block its report.json.
  const out = join(work, 'out-report');
  const made = await runCli(
    ['run', '-d', '0.5', '-c', '1', '-w', '1', '--no-profile', '-o', out, '--', 'node', join(apps, 'marks-start.cjs')],
    { env: { MARK_FILE: join(work, 'mark-report') }, timeoutMs: 60_000 },
  );
  assert.equal(made.code, 0, made.stderr);
  cpSync(join(out, readdirSync(out)[0]), dir, { recursive: true });
  rmSync(join(dir, 'report.json'));
  mkdirSync(join(dir, 'report.json'));
  const r = await runCli(['report', dir], { timeoutMs: 30_000 });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /error HOTPATH_ERR_RUN_DIR: Cannot write into the run directory .*EISDIR/);
  assert.doesNotMatch(r.stderr, /This is a bug/);
});
