// `hotpath run` with several processes and threads: a cluster of 2 workers (both serve,
// both report, the primary is seen too) and a server that hands work to worker threads
// (each thread reports separately). Nothing may outlive the run.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readRunDir } from '../../src/profile/read-run.js';
import { apps, onlyRunDir, readMeta, runCli, survivors, tempOut } from '../run/helpers/run-cli.js';

async function runApp(file: string) {
  const tmp = tempOut();
  after(tmp.cleanup);
  const r = await runCli(['run', '-d', '1.5', '-c', '8', '-w', '1', '--out', tmp.out, '--', 'node', file], { cwd: apps });
  const dir = onlyRunDir(tmp.out);
  return { r, dir, meta: readMeta(dir), run: await readRunDir(dir) };
}

describe('hotpath run with clusters and worker threads', () => {
  test('a cluster primary with 2 workers: both workers are targets and report telemetry', async () => {
    const { r, meta, run } = await runApp('cluster-server.cjs');
    assert.equal(r.code, 0, r.stderr);
    const workers = meta.processes.filter((p) => p.clusterWorkerId !== undefined);
    assert.equal(workers.length, 2, `two cluster workers seen: ${JSON.stringify(meta.processes)}`);
    assert.ok(
      workers.every((w) => w.isTarget),
      'both workers serve the port',
    );
    assert.ok(
      meta.processes.some((p) => p.isClusterPrimary),
      'the primary loaded the agent too',
    );
    for (const w of workers) {
      const t = run.threads.find((x) => x.pid === w.pid && x.threadId === w.threadId);
      assert.ok(t && t.samples.length > 0, `worker ${w.pid} sent samples`);
      // Told which server is driven (the shared port), each worker still counts its requests.
      const served = t.samples.filter((s) => s.http?.drivenOnly === true).reduce((n, s) => n + (s.http?.finished ?? 0), 0);
      assert.ok(served > 0, `worker ${w.pid} counted the driven server's requests`);
    }
    const served = run.threads.flatMap((t) => t.samples).reduce((n, s) => n + (s.http?.finished ?? 0), 0);
    assert.ok(served > 0, 'the workers counted requests');
    assert.ok(run.load && run.load.requests.total > 0);
    assert.deepEqual(survivors(meta), []);
  });

  test('an app with worker threads: each thread reports on its own', async () => {
    const { r, meta, run } = await runApp('worker-threads-server.cjs');
    assert.equal(r.code, 0, r.stderr);
    const target = meta.processes.find((p) => p.isTarget);
    assert.ok(target);
    const threads = run.threads.filter((t) => t.pid === target.pid && t.hello && !t.hello.isMainThread);
    assert.ok(threads.length >= 2, `the 2 pool threads said hello: ${run.threads.map((t) => `${t.pid}/${t.threadId}`).join(' ')}`);
    assert.ok(run.load && run.load.requests.total > 0 && run.load.errors.total === 0);
    assert.deepEqual(survivors(meta), []);
  });
});
