import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { baselineRerun } from '../../src/cli/commands/run-series.js';
import type { RunData } from '../../src/run-dir/run-data.js';

const base = (command: string[], cwd: string, target?: { url: string; pid?: number }) =>
  ({ meta: { command, cwd, ...(target ? { target } : {}) } }) as unknown as RunData;

test('the baseline is re-run only when that measures other code: another directory or command, on this machine', () => {
  const here = process.cwd();
  assert.equal(baselineRerun(base(['node', 'server.js'], tmpdir()), ['node', 'server.js'], here).rerun, true);
  assert.equal(baselineRerun(base(['node', 'old-server.js'], here), ['node', 'server.js'], here).rerun, true);
  const same = baselineRerun(base(['node', 'server.js'], here), ['node', 'server.js'], here);
  assert.equal(same.rerun, false);
  assert.match(same.note, /would measure the new code/);
  const elsewhere = baselineRerun(base(['node', 'server.js'], '/home/runner/work/app/app'), ['node', 'server.js'], here);
  assert.equal(elsewhere.rerun, false);
  assert.match(elsewhere.note, /is not on this machine/);
  const url = baselineRerun(base(['http://127.0.0.1:3000/'], here, { url: 'http://127.0.0.1:3000/' }), ['node', 'server.js'], here);
  assert.equal(url.rerun, false);
  assert.match(url.note, /--url/);
});
