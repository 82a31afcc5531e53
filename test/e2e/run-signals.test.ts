// Signals to `hotpath run` itself: the same signal twice in quick succession (as `timeout`
// or a process manager sends it to hotpath and then to its process group) is one Ctrl-C, so
// the run still collects and writes everything.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPEAT_SIGNAL_WINDOW_MS } from '../../src/cli/commands/run.js';
import { readRunDir } from '../../src/profile/read-run.js';
import { apps, onlyRunDir, readMeta, runCli, survivors, tempOut } from '../run/helpers/run-cli.js';

describe('hotpath run receiving signals', () => {
  test('two SIGINTs 50 ms apart count as one Ctrl-C: load.json and the reports are written, exit 130', async () => {
    assert.ok(REPEAT_SIGNAL_WINDOW_MS >= 100 && REPEAT_SIGNAL_WINDOW_MS <= 1000);
    const tmp = tempOut();
    after(tmp.cleanup);
    const r = await runCli(['run', '-c', '4', '-d', '30', '--out', tmp.out, '--', 'node', 'cjs-server.cjs'], {
      cwd: apps,
      onSpawn: (child, waitFor) =>
        void waitFor('hotpath: load:').then(() =>
          setTimeout(() => {
            child.kill('SIGINT');
            setTimeout(() => child.kill('SIGINT'), 50);
          }, 700),
        ),
    });
    const dir = onlyRunDir(tmp.out);
    const meta = readMeta(dir);
    assert.equal(r.code, 130, r.stderr);
    assert.equal(meta.outcome.status, 'interrupted');
    assert.doesNotMatch(meta.outcome.reason ?? '', /second Ctrl-C/, 'not killed at once');
    assert.doesNotMatch(r.stderr, /killing the target now/);
    // The kernel keeps one pending SIGINT: a second sent before hotpath's handler ran for the first
    // (a loaded Node 24 suite, the two 10 ms apart) is merged into it, and there is no repeat to tell.
    const handled = r.stderr.match(/SIGINT: stopping/g)?.length ?? 0;
    assert.equal(handled, 1, r.stderr);
    if (!/SIGINT again within \d+ ms: taken as a repeat/.test(r.stderr)) console.log('# the two SIGINTs were merged by the kernel');
    assert.ok(existsSync(join(dir, 'load.json')), 'load.json is written');
    for (const f of ['report.json', 'report.md', 'report.html']) assert.ok(existsSync(join(dir, f)), `${f} is written`);
    const run = await readRunDir(dir);
    assert.ok(run.load && run.load.requests.total > 0, 'the partial load result is kept');
    assert.deepEqual(survivors(meta), []);
  });
});
