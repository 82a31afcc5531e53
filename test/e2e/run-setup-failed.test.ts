// Issue 23.11: a --setup request answered with an error status is said in the terminal and in
// report.json, report.md and report.html, not only in load.json's warnings.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apps, runCli } from '../run/helpers/run-cli.js';
import { htmlWithPayload } from './helpers/html-payload.js';
import type { Report } from '../../src/report/report-schema.js';

const work = mkdtempSync(join(tmpdir(), 'hotpath-setup-failed-'));
after(() => rmSync(work, { recursive: true, force: true }));

test('issue 23.11: a setup request answered 401 is named in the terminal and the three reports', async () => {
  const setup = join(work, 'wrong-login.json');
  writeFileSync(setup, JSON.stringify([{ method: 'POST', path: '/login', body: { user: 'load' } }]));
  const out = join(work, 'runs');
  const r = await runCli(
    [
      'run',
      '-d',
      '1',
      '-c',
      '2',
      '-w',
      '1',
      '--no-profile',
      '--setup',
      setup,
      '-o',
      out,
      '--json',
      '--',
      'node',
      join(apps, 'needs-setup.cjs'),
    ],
    { timeoutMs: 60_000 },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /setup request failed/i);
  assert.match(r.stderr, /POST \/login answered 401/);
  const report = JSON.parse(r.stdout) as Report;
  assert.equal(report.findings[0].code, 'HOTPATH_SETUP_FAILED');
  const dir = join(out, readdirSync(out)[0]);
  assert.match(readFileSync(join(dir, 'report.md'), 'utf8'), /setup request failed[\s\S]*POST \/login answered 401/i);
  assert.match(htmlWithPayload(readFileSync(join(dir, 'report.html'), 'utf8')), /HOTPATH_SETUP_FAILED[\s\S]*POST \/login answered 401/);
});
