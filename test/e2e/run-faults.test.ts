// `hotpath run` when things go wrong: a crash mid-load, Ctrl-C, a slow start, a server
// that never listens, exits at start-up, never answers or drops every connection, a flood of stdout, a 2 s event-loop block
// (and blocks named by the stalls alone when there is no CPU profile).
// Nothing is lost (the run directory says how the run ended) and nothing outlives the run.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readRunDir } from '../../src/profile/read-run.js';
import type { Finding } from '../../src/analyze/finding.js';
import { apps, onlyRunDir, readMeta, runCli, survivors, tempOut, type RunCliOptions } from '../run/helpers/run-cli.js';

async function runApp(file: string, flags: string[], o: RunCliOptions = {}) {
  const tmp = tempOut();
  after(tmp.cleanup);
  const r = await runCli(['run', '-w', '1', '-c', '4', ...flags, '--out', tmp.out, '--', 'node', file], { cwd: apps, ...o });
  const dir = onlyRunDir(tmp.out);
  return { r, dir, meta: readMeta(dir) };
}

describe('hotpath run when things go wrong', () => {
  test('the target crashes mid-load: the run directory is complete and says how it ended', async () => {
    const { r, dir, meta } = await runApp('crash-server.cjs', ['-d', '5'], { env: { CRASH_AFTER: '100' } });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(meta.outcome.status, 'target-crashed');
    assert.equal(meta.outcome.exitCode, 1);
    assert.match(meta.outcome.reason ?? '', /load phase/);
    assert.ok(
      meta.outcome.stderrTail?.some((l) => l.includes('fixture crash')),
      'the crash is in the stderr tail',
    );
    const run = await readRunDir(dir);
    assert.ok(run.load && run.load.requests.total >= 99, 'what was measured before the crash is kept');
    assert.ok(run.load.durationMs < 4500, 'load stopped when the target died');
    assert.ok(existsSync(join(dir, 'report.json')));
    assert.match(r.stderr, /exited with code 1/);
    assert.deepEqual(survivors(meta), []);
  });

  for (const how of ['throws', 'exit'] as const) {
    const what = how === 'throws' ? 'throws an uncaught exception' : 'calls process.exit()';
    test(`the target ${what} after 1 s of profiled load: the CPU profile up to then is kept and reported`, async () => {
      const env = { CRASH_AFTER_MS: '1000', ...(how === 'exit' ? { CRASH_WITH: 'exit' } : {}) };
      // At 1 ms (the default for a 10 s load is 10 ms): enough samples to tell the profile covers the second before the crash.
      const { r, dir, meta } = await runApp('crash-server.cjs', ['-d', '10', '--cpu-interval', '1000'], { env });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(meta.outcome.status, 'target-crashed');
      assert.equal(meta.outcome.exitCode, how === 'exit' ? 3 : 1);
      const cpu = meta.profiles.filter((p) => p.kind === 'cpu');
      assert.equal(cpu.length, 1, `meta.json lists the rescued profile: ${JSON.stringify(meta.profiles)}`);
      assert.ok(cpu[0].end - cpu[0].start >= 800, 'it covers the load up to the crash');
      const profile = JSON.parse(readFileSync(join(dir, cpu[0].file), 'utf8')) as {
        nodes: { callFrame: { functionName: string } }[];
        samples: number[];
      };
      assert.ok(profile.samples.length >= 200, `${profile.samples.length} samples`);
      assert.ok(
        profile.nodes.some((n) => n.callFrame.functionName === 'checksumRows'),
        "the app's own work is in it",
      );
      const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as { hotspots: { function: string }[] };
      assert.ok(
        report.hotspots.some((h) => h.function === 'checksumRows'),
        `report.json's hotspots come from the profile: ${report.hotspots.map((h) => h.function).join(', ')}`,
      );
      assert.ok(statSync(join(dir, 'report.html')).size > 0);
      assert.doesNotMatch(readFileSync(join(dir, 'target.log'), 'utf8'), /Waiting for the debugger/);
      assert.deepEqual(survivors(meta), []);
    });
  }

  test('Ctrl-C (SIGINT to hotpath): load stops, everything is written, exit 130', async () => {
    const { r, dir, meta } = await runApp('cjs-server.cjs', ['-d', '30'], {
      onSpawn: (child, waitFor) => void waitFor('hotpath: load:').then(() => setTimeout(() => child.kill('SIGINT'), 700)),
    });
    assert.equal(r.code, 130, r.stderr);
    assert.equal(meta.outcome.status, 'interrupted');
    assert.match(meta.outcome.reason ?? '', /Ctrl-C/);
    const run = await readRunDir(dir);
    assert.ok(run.load && run.load.requests.total > 0, 'the partial load result is written');
    assert.ok(run.load.durationMs < 10_000);
    assert.ok(
      run.threads.some((t) => t.samples.length > 0),
      'telemetry is on disk',
    );
    assert.ok(existsSync(join(dir, 'report.json')));
    assert.deepEqual(survivors(meta), []);
  });

  test('Ctrl-C while waiting for the target to listen: it is stopped, exit 130', async () => {
    const { r, meta } = await runApp('never-listens.cjs', ['-d', '1', '--ready-timeout', '20'], {
      onSpawn: (child, waitFor) => void waitFor('waiting for it to listen').then(() => setTimeout(() => child.kill('SIGINT'), 500)),
    });
    assert.equal(r.code, 130, r.stderr);
    assert.equal(meta.outcome.status, 'interrupted');
    assert.match(meta.outcome.reason ?? '', /starting phase/);
    assert.deepEqual(survivors(meta), []);
  });

  test('a slow-starting app is waited for', async () => {
    const { r, meta } = await runApp('slow-start.cjs', ['-d', '1'], { env: { START_DELAY_MS: '1500' } });
    assert.equal(r.code, 0, r.stderr);
    const starting = meta.phases.find((p) => p.phase === 'starting');
    assert.ok(starting?.end !== undefined && starting.end - starting.start >= 1400, 'the starting phase covers the delay');
    assert.equal(meta.outcome.status, 'completed');
  });

  test('an app that never listens: HOTPATH_ERR_READY_TIMEOUT with its output, and it is stopped', async () => {
    const { r, dir, meta } = await runApp('never-listens.cjs', ['-d', '1', '--ready-timeout', '1.5']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /HOTPATH_ERR_READY_TIMEOUT/);
    assert.match(r.stderr, /still waiting for the database/);
    assert.match(r.stderr, /run directory: /);
    assert.equal(meta.outcome.status, 'never-listened');
    assert.equal(meta.outcome.code, 'HOTPATH_ERR_READY_TIMEOUT');
    assert.match(readFileSync(join(dir, 'target.log'), 'utf8'), /connecting to the database/);
    assert.deepEqual(survivors(meta), []);
  });

  test('an app that exits at start-up: HOTPATH_ERR_TARGET_EXITED with its exit code and output', async () => {
    const { r, meta } = await runApp('exits-early.cjs', ['-d', '1']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /HOTPATH_ERR_TARGET_EXITED/);
    assert.match(r.stderr, /exited with code 3/);
    assert.match(r.stderr, /missing configuration DATABASE_URL/);
    assert.equal(meta.outcome.status, 'never-listened');
    assert.equal(meta.outcome.exitCode, 3);
  });

  test('an app that accepts requests and never answers: report written, HOTPATH_ERR_NO_RESPONSES, exit 1', async () => {
    const { r, dir, meta } = await runApp('never-answers.cjs', ['-d', '1', '--timeout', '300']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /error HOTPATH_ERR_NO_RESPONSES: No request got a response .*timeouts \d+/);
    assert.equal(meta.outcome.status, 'completed');
    assert.ok(existsSync(join(dir, 'report.json')), 'the run is still diagnosed and kept');
    assert.deepEqual(survivors(meta), []);
  });

  test('an app that drops every connection: no request gets a response, and no "healthy" finding is printed', async () => {
    const { r, dir, meta } = await runApp('drops-connections.cjs', ['-d', '1']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /error HOTPATH_ERR_NO_RESPONSES: No request got a response/);
    assert.doesNotMatch(r.stderr, /healthy|No performance problem found/);
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as { findings: Finding[] };
    assert.equal(
      report.findings.some((f) => f.category === 'healthy'),
      false,
    );
    assert.doesNotMatch(readFileSync(join(dir, 'report.md'), 'utf8'), /Verdict:\*\* healthy/);
    assert.deepEqual(survivors(meta), []);
  });

  test('an app that floods stdout: the whole output is kept in target.log and the run completes', async () => {
    const { r, dir, meta } = await runApp('flood-stdout.cjs', ['-d', '1']);
    assert.equal(r.code, 0, r.stderr);
    const log = join(dir, 'target.log');
    assert.ok(statSync(log).size > 8_000_000, 'megabytes of output are in the log');
    assert.match(readFileSync(log, 'utf8'), /FLOOD-READY-MARKER/);
    const run = await readRunDir(dir);
    assert.ok(run.load && run.load.requests.total > 0);
    assert.deepEqual(survivors(meta), []);
  });

  test('an app that blocks its event loop for 2 s: the gap is recorded in telemetry', async () => {
    const { r, dir } = await runApp('block-loop.cjs', ['-d', '3.5', '-c', '1']);
    assert.equal(r.code, 0, r.stderr);
    const run = await readRunDir(dir);
    const target = run.threads.find((t) => t.listens.length > 0);
    assert.ok(target);
    const longestStall = Math.max(0, ...target.stalls.map((s) => s.durationMs));
    const worstDelay = Math.max(0, ...target.samples.map((s) => s.eld.max));
    assert.ok(longestStall >= 1500 || worstDelay >= 1500, `a ~2 s gap is recorded (stall ${longestStall} ms, delay ${worstDelay} ms)`);
    const covered = target.samples.reduce((ms, s) => ms + s.intervalMs, 0);
    assert.ok(covered >= 3000, 'the samples cover the block, not just the time around it');
  });

  test("without a CPU profile, the stalls' own samples name the function that blocks", async () => {
    const { r, dir } = await runApp('block-loop.cjs', ['-d', '3', '-c', '1', '--no-profile'], {
      env: { BLOCK_MS: '700', BLOCK_REPEAT: '1' },
    });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as { findings: Finding[] };
    const blocking = report.findings.find((f) => f.category === 'event-loop-blocking');
    assert.ok(blocking, report.findings.map((f) => f.code).join());
    assert.deepEqual([blocking.culprit?.function, blocking.culprit?.file], ['spinFor', 'block-loop.cjs']);
    assert.ok((blocking.evidence.culpritStalledShare as number) >= 0.5, JSON.stringify(blocking.evidence));
  });
});
