// `hotpath run` budgets on real runs: budgets that hold exit 0, one that fails exits 4 with
// the verdict printed last (one line per budget) and recorded in report.json; `--baseline`
// runs and compares in one step; a budget that cannot be read is a usage error before any run.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, runCli, tempOut } from '../run/helpers/run-cli.js';
import type { Report } from '../../src/report/report-schema.js';
import { budgetOptionSpecs } from '../../src/budget/budget-options.js';

const { out, cleanup } = tempOut();
after(cleanup);
const cwd = join(root, 'test', 'fixtures', 'compare', 'cpu-work');

function runWith(name: string, flags: string[]) {
  return runCli(['run', '-d', '2', '-c', '4', '--out', join(out, name), ...flags, '--', 'node', 'server.js'], {
    cwd,
    env: { PORT: '0', WORK: '2' },
    timeoutMs: 120_000,
  });
}
const runDirOf = (name: string) => join(out, name, readdirSync(join(out, name))[0]);
const lastLines = (stderr: string, n: number) => stderr.trimEnd().split('\n').slice(-n);

test(
  'budgets that hold exit 0; one that fails exits 4, printed last and in report.json; --baseline compares',
  { timeout: 240_000 },
  async () => {
    const ok = await runWith('base', ['--assert', 'rps>1', '--assert', 'no critical']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(
      lastLines(ok.stderr, 3).map((l) => l.split(':')[0]),
      ['budget pass  rps>1', 'budget pass  no critical', 'budgets'],
    );
    const base = runDirOf('base');
    assert.equal((JSON.parse(readFileSync(join(base, 'report.json'), 'utf8')) as Report).budgets?.passed, true);

    const failing = await runWith('next', [
      '--assert',
      'p99<0.001ms',
      '--assert',
      'rps>1',
      '--baseline',
      base,
      '--max-regression',
      '50%',
      '--json',
    ]);
    assert.equal(failing.code, 4, failing.stderr);
    const lines = lastLines(failing.stderr, 6);
    assert.match(lines[0], /^budget FAIL {2}p99<0\.001ms: p99 /);
    assert.match(lines[1], /^budget pass {2}rps>1:/);
    assert.match(lines[2], /^budget pass {2}throughput max regression 50%: .* vs baseline$/);
    assert.match(lines[5], /^budgets: 1 of 5 failed \(exit 4\)$/);
    const report = JSON.parse(failing.stdout) as Report;
    assert.equal(report.budgets?.passed, false);
    assert.equal(report.budgets?.results.length, 5);
    assert.equal(report.budgets?.baseline, base);
    const next = runDirOf('next');
    assert.deepEqual((JSON.parse(readFileSync(join(next, 'report.json'), 'utf8')) as Report).budgets, report.budgets);
    assert.ok(existsSync(join(next, 'compare.md')), 'the comparison with the baseline is written into the new run');
    assert.match(failing.stderr, /## hotpath compare/);
  },
);

test('a budget that cannot be read, or --max-regression without --baseline: exit 2 before any run', { timeout: 60_000 }, async () => {
  const bad = await runWith('bad', ['--assert', 'p99 under 5ms']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /HOTPATH_ERR_BUDGET/);
  assert.ok(!existsSync(join(out, 'bad')), 'no run was started');
  const alone = await runWith('alone', ['--max-regression', '5%']);
  assert.equal(alone.code, 2);
  assert.match(alone.stderr, /--baseline/);
  const missing = await runWith('missing', ['--baseline', join(out, 'nowhere')]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /HOTPATH_ERR_RUN_DIR/);
});

test('docs/run.md documents every budget flag', () => {
  const doc = readFileSync(join(root, 'docs', 'run.md'), 'utf8');
  for (const s of budgetOptionSpecs) assert.ok(doc.includes(`\`--${s.flag}`), `--${s.flag}`);
});
