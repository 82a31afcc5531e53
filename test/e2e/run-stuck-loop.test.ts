// `hotpath run` on a server whose event loop blocks forever right after listening: the run
// still ends in bounded time with every report written, and the diagnosis says the loop never
// came back, naming the function that holds it (from the stall watchdog's samples), instead of
// "nothing measured".

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Report } from '../../src/report/report-schema.js';
import { apps, onlyRunDir, readMeta, runCli, survivors, tempOut } from '../run/helpers/run-cli.js';

async function runStuck(flags: string[], env: NodeJS.ProcessEnv = {}) {
  const tmp = tempOut();
  after(tmp.cleanup);
  const started = Date.now();
  const r = await runCli(['run', '-w', '1', '-c', '4', '-d', '2', ...flags, '--out', tmp.out, '--', 'node', 'blocks-forever.cjs'], {
    cwd: apps,
    env,
    timeoutMs: 60_000,
  });
  const elapsedMs = Date.now() - started;
  const dir = onlyRunDir(tmp.out);
  return { r, dir, meta: readMeta(dir), elapsedMs };
}

describe('hotpath run on a server whose event loop never comes back', () => {
  for (const profile of [true, false]) {
    test(`the report says the loop never came back and names warmCache (${profile ? 'with' : 'without'} a CPU profile)`, async () => {
      const { r, dir, meta, elapsedMs } = await runStuck(profile ? [] : ['--no-profile']);
      assert.ok(elapsedMs < 30_000, `bounded: ${elapsedMs} ms`);
      for (const f of ['meta.json', 'load.json', 'report.json', 'report.md', 'report.html']) assert.ok(existsSync(join(dir, f)), f);
      const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
      const [main] = report.findings;
      assert.equal(main?.code, 'HOTPATH_EVENT_LOOP_STUCK', report.findings.map((f) => f.code).join(', '));
      assert.equal(main.severity, 'critical');
      assert.deepEqual([main.culprit?.function, main.culprit?.file], ['warmCache', 'blocks-forever.cjs'], JSON.stringify(main.evidence));
      assert.ok(
        (main.evidence.stack as string[]).some((f) => f.startsWith('warmCache blocks-forever.cjs:')),
        JSON.stringify(main.evidence),
      );
      assert.match(readFileSync(join(dir, 'report.md'), 'utf8'), /never came back/);
      assert.match(r.stderr, /critical The event loop never came back: warmCache never returned/);
      // When the loop blocked before the first request was answered, the run measured nothing: the error says why.
      if (r.code === 1) assert.match(r.stderr, /HOTPATH_ERR_NO_RESPONSES: .*The event loop never came back/);
      else assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(survivors(meta), []);
    });
  }

  test('a blocked loop cannot run its SIGTERM handler: killed after --grace, the run still ends and reports', async () => {
    // Blocked during the warm-up: the measured load gets no response, and the error says why.
    const { r, dir, meta, elapsedMs } = await runStuck(['--grace', '1', '--warmup', '1'], { HANDLE_SIGTERM: '1' });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /HOTPATH_ERR_NO_RESPONSES: .*The event loop never came back: warmCache never returned/);
    assert.ok(elapsedMs < 30_000, `bounded: ${elapsedMs} ms`);
    assert.equal(meta.outcome.signal, 'SIGKILL', r.stderr);
    assert.ok(meta.warnings?.some((w) => /--grace/.test(w)));
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
    assert.equal(report.findings[0]?.code, 'HOTPATH_EVENT_LOOP_STUCK');
    assert.deepEqual(survivors(meta), []);
  });
});
