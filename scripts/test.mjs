// Runs the whole suite with node's built-in test runner, from the built dist/test.
// Unit and integration tests run two files at a time; end-to-end tests (test/e2e)
// run one file at a time, because they drive real load and compete for 2 cores.
// Usage: node scripts/test.mjs [filter...]  (filters are substrings of test file paths)
import { spawnSync } from 'node:child_process';
import { readdirSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const testDir = join(root, 'dist', 'test');
const filters = process.argv.slice(2);

function list(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.test.js'))
    .map((f) => join(dir, f))
    .filter((f) => filters.length === 0 || filters.some((x) => relative(root, f).includes(x)))
    .sort();
}

const all = list(testDir);
const e2e = all.filter((f) => relative(testDir, f).startsWith('e2e'));
const unit = all.filter((f) => !e2e.includes(f));

let passed = 0;
let failed = 0;
let skipped = 0;
let status = 0;
for (const [files, concurrency] of [
  [unit, 2],
  [e2e, 1],
]) {
  if (files.length === 0) continue;
  const tap = join(tmpdir(), `hotpath-test-${process.pid}-${concurrency}.tap`);
  const r = spawnSync(
    process.execPath,
    [
      '--test',
      `--test-concurrency=${concurrency}`,
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
      ...files,
    ],
    { cwd: root, stdio: 'inherit', env: { ...process.env, HOTPATH_TEST: '1' } },
  );
  if (r.status !== 0) status = r.status ?? 1;
  const text = existsSync(tap) ? readFileSync(tap, 'utf8') : '';
  rmSync(tap, { force: true });
  passed += Number(/^# pass (\d+)/m.exec(text)?.[1] ?? 0);
  failed += Number(/^# fail (\d+)/m.exec(text)?.[1] ?? 0);
  skipped += Number(/^# skipped (\d+)/m.exec(text)?.[1] ?? 0);
}
console.log(`node ${process.version}`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
if (all.length === 0) {
  console.error('no test files found');
  status = 1;
}
process.exit(status || (failed > 0 ? 1 : 0));
