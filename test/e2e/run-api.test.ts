// The programmatic API: `import { run } from 'hotpath'`, with an AbortSignal for Ctrl-C,
// progress hooks, and options checked by the same declaration as the CLI.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { run } from '../../src/index.js';
import { readRunDir } from '../../src/profile/read-run.js';
import { apps, survivors, tempOut } from '../run/helpers/run-cli.js';

test('run() resolves with the run directory, meta, load and report', async () => {
  const tmp = tempOut();
  after(tmp.cleanup);
  const statuses: string[] = [];
  let announced = '';
  const result = await run(
    { command: ['node', join(apps, 'esm-server.mjs')], duration: 0.5, connections: 2, workers: 1, out: tmp.out },
    {
      onRunDir: (dir) => {
        announced = dir;
      },
      onStatus: (m) => statuses.push(m),
    },
  );
  assert.equal(result.runDir, announced);
  assert.equal(result.meta.outcome.status, 'completed');
  assert.ok(result.load && result.load.requests.total > 0);
  assert.equal(result.report?.runDir, result.runDir);
  assert.ok(statuses.some((m) => m.startsWith('load:')));
  assert.deepEqual(survivors(result.meta), []);
  // After the load, one reading of the target's heap after a full GC the agent forced.
  const data = await readRunDir(result.runDir);
  const target = data.threads.find((t) => t.listens.length > 0)!;
  const post = target.samples.filter((s) => s.postLoadGc !== undefined);
  assert.equal(post.length, 1, 'one post-load GC sample');
  assert.ok(post[0].t > data.loadWindow!.end, 'after the load window');
  assert.ok(post[0].postLoadGc!.heapAfter > 0 && post[0].postLoadGc!.heapAfter <= post[0].mem.heapUsed);
});

test('aborting the signal stops the run and still writes it', async () => {
  const tmp = tempOut();
  after(tmp.cleanup);
  const controller = new AbortController();
  const result = await run(
    { command: ['node', join(apps, 'cjs-server.cjs')], duration: 30, connections: 2, workers: 1, out: tmp.out },
    {
      signal: controller.signal,
      onStatus: (m) => {
        if (m.startsWith('load:')) setTimeout(() => controller.abort(), 500);
      },
    },
  );
  assert.equal(result.meta.outcome.status, 'interrupted');
  assert.ok(result.load && result.load.durationMs < 10_000);
  assert.deepEqual(survivors(result.meta), []);
});

test("bad options are refused with the CLI's codes", async () => {
  await assert.rejects(run({ command: [] }), { code: 'HOTPATH_ERR_MISSING_ARGUMENT' });
  await assert.rejects(run({ command: ['node', 'x.js'], cpuInterval: 10 }), { code: 'HOTPATH_ERR_INVALID_OPTION' });
  await assert.rejects(run({ command: ['node', 'x.js'], ...({ bogus: 1 } as object) }), { code: 'HOTPATH_ERR_UNKNOWN_OPTION' });
});
