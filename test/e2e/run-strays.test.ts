// Processes that outlive the target's process group: a helper the server started that loaded
// the agent too. One in a group of its own but still in the target's session is stopped with
// the run; one detached into its own session (spawn's `detached: true`) is left running and
// named (pid, command) in meta.json's warnings and on the terminal.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apps, onlyRunDir, processAlive, readMeta, runCli, survivors, tempOut } from '../run/helpers/run-cli.js';

async function runWithHelper(mode: 'detached' | 'group') {
  const tmp = tempOut();
  after(tmp.cleanup);
  const pidFile = join(tmp.out, 'child.pid');
  const r = await runCli(
    ['run', '-w', '1', '-c', '2', '-d', '1', '--grace', '2', '--out', join(tmp.out, 'runs'), '--', 'node', 'spawns-detached.cjs'],
    {
      cwd: apps,
      env: { CHILD_MODE: mode, CHILD_PID_FILE: pidFile },
    },
  );
  assert.ok(existsSync(pidFile), `the helper started\n${r.stderr}`);
  const childPid = Number(readFileSync(pidFile, 'utf8'));
  after(() => {
    try {
      process.kill(childPid, 'SIGKILL');
    } catch {
      /* stopped by the run */
    }
  });
  const meta = readMeta(onlyRunDir(join(tmp.out, 'runs')));
  return { r, meta, childPid };
}

describe("hotpath run: processes that left the target's process group", () => {
  test('a helper detached into its own session keeps running: warned about, with its pid and command', async () => {
    const { r, meta, childPid } = await runWithHelper('detached');
    assert.equal(r.code, 0, r.stderr);
    assert.ok(
      meta.processes.some((p) => p.pid === childPid),
      'its agent said hello',
    );
    const warning = meta.warnings?.find((w) => w.includes(`pid ${childPid}`));
    assert.ok(warning, JSON.stringify(meta.warnings));
    assert.match(warning, /detached-child\.cjs/);
    assert.match(warning, /still running after the run/);
    assert.match(warning, new RegExp(`kill ${childPid}`));
    assert.match(r.stderr, new RegExp(`warning pid ${childPid} \\(\`node .*detached-child\\.cjs\`\\)`));
    assert.ok(processAlive(childPid), 'left running, as said');
    assert.deepEqual(survivors({ ...meta, processes: meta.processes.filter((p) => p.pid !== childPid) }), []);
  });

  test("a helper in a group of its own but in the target's session is stopped with the run, and named", async () => {
    const { r, meta, childPid } = await runWithHelper('group');
    assert.equal(r.code, 0, r.stderr);
    assert.ok(
      meta.processes.some((p) => p.pid === childPid),
      'its agent said hello',
    );
    assert.equal(processAlive(childPid), false, 'stopped');
    const warning = meta.warnings?.find((w) => w.includes(`pid ${childPid}`));
    assert.ok(warning, JSON.stringify(meta.warnings));
    assert.match(warning, /detached-child\.cjs.*hotpath stopped it \(SIGTERM\)/);
    assert.match(r.stderr, new RegExp(`stopped pid ${childPid}`));
    assert.deepEqual(survivors(meta), []);
  });
});
